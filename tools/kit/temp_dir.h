// A scratch directory for the ranks of one run.
#pragma once

#include <string>

namespace hetccl::kit {

// A fresh directory under $TMPDIR (or /tmp), removed with its contents when
// the object goes. Throws std::system_error if it cannot be made.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace hetccl::kit
