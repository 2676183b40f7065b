#include "doctor/library_warnings.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace hetccl {
namespace doctor {
namespace {

constexpr const char* kWarnMark = " HETCCL WARN ";

}  // namespace

LibraryWarnings::LibraryWarnings() {
  if (std::getenv("HETCCL_DEBUG_FILE") || std::getenv("NCCL_DEBUG_FILE"))
    return;
  path_ = "/tmp/hetccl-doctor." + std::to_string(getpid()) + ".log";
  setenv("HETCCL_DEBUG_FILE", path_.c_str(), 1);
}

LibraryWarnings::~LibraryWarnings() {
  if (capturing()) std::remove(path_.c_str());
}

std::vector<std::string> LibraryWarnings::read() const {
  std::vector<std::string> messages;
  if (!capturing()) return messages;
  std::ifstream log(path_);
  for (std::string line; std::getline(log, line);) {
    const size_t mark = line.find(kWarnMark);
    if (mark == std::string::npos) continue;
    const std::string message = line.substr(mark + std::strlen(kWarnMark));
    if (std::find(messages.begin(), messages.end(), message) == messages.end())
      messages.push_back(message);
  }
  return messages;
}

}  // namespace doctor
}  // namespace hetccl
