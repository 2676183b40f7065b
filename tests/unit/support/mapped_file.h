// A one-page file mapped into this process for the life of a scope, as a
// loaded library would be: it shows in /proc/self/maps under its path, which
// is where HetCCL looks for the libraries of a PyTorch wheel.
#pragma once

#include <string>

namespace hetccl {

class MappedFile {
 public:
  // Creates (or truncates) `path`; its directory must exist.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

 private:
  void* mapping_;
};

}  // namespace hetccl
