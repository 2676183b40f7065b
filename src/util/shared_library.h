// A shared library opened with dlopen, closed when the object goes away.
#pragma once

#include <string>

namespace hetccl {

class SharedLibrary {
 public:
  // How the library's own calls to functions it exports bind.
  enum class Binding {
    // Inside it, never to functions of the same name that HetCCL exports
    // (RTLD_DEEPBIND): for vendor libraries that export the NCCL API.
    kOwnFirst,
    // The usual search order: for HetCCL's own modules, which export one
    // entry point (and RTLD_DEEPBIND is refused under AddressSanitizer).
    kUsual,
  };
  // Opens `path` with RTLD_NOW | RTLD_LOCAL. Throws ncclSystemError with
  // dlerror()'s message.
  static SharedLibrary open(const std::string& path,
                            Binding binding = Binding::kOwnFirst);

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
