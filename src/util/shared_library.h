// A shared library opened with dlopen, closed when the object goes away.
#pragma once

#include <string>

namespace hetccl {

class SharedLibrary {
 public:
  // Opens `path` with RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND: the library's
  // calls to its own exported functions bind inside it, never to functions
  // of the same name that HetCCL exports. Throws ncclSystemError with
  // dlerror()'s message.
  static SharedLibrary open(const std::string& path);

  SharedLibrary() = default;
  SharedLibrary(SharedLibrary&& other) noexcept;
  SharedLibrary& operator=(SharedLibrary&& other) noexcept;
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;
  ~SharedLibrary();

  // The symbol's address in this library only, or nullptr.
  void* find(const char* symbol) const;
  const std::string& path() const { return path_; }

 private:
  SharedLibrary(void* handle, std::string path)
      : handle_(handle), path_(std::move(path)) {}

  void* handle_ = nullptr;
  std::string path_;
};

}  // namespace hetccl
