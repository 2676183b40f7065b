#include "support/temp_dir.h"

#include <gtest/gtest.h>
#include <stdlib.h>

namespace hetccl {

namespace fs = std::filesystem;

TempDir::TempDir() {
  std::string pattern = fs::temp_directory_path() / "hetccl-test-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

std::string TempDir::place(const std::string& relative) const {
  fs::path at = path_ / relative;
  fs::create_directories(at.parent_path());
  return at.string();
}

std::string TempDir::link(const std::string& relative,
                          const std::string& target) const {
  std::string at = place(relative);
  fs::create_symlink(target, at);
  return at;
}

}  // namespace hetccl
