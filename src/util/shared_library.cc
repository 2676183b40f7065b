#include "util/shared_library.h"

#include <dlfcn.h>

#include <utility>

#include "util/error.h"

namespace hetccl {

SharedLibrary SharedLibrary::open(const std::string& path, Binding binding) {
  int flags = RTLD_NOW | RTLD_LOCAL;
  if (binding == Binding::kOwnFirst) flags |= RTLD_DEEPBIND;
  void* handle = dlopen(path.c_str(), flags);
  if (handle == nullptr)
    fail(ncclSystemError, "cannot load %s: %s", path.c_str(), dlerror());
  return SharedLibrary(handle, path);
}

SharedLibrary::SharedLibrary(SharedLibrary&& other) noexcept {
  *this = std::move(other);
}

SharedLibrary& SharedLibrary::operator=(SharedLibrary&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) dlclose(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

SharedLibrary::~SharedLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

void* SharedLibrary::find(const char* symbol) const {
  return handle_ == nullptr ? nullptr : dlsym(handle_, symbol);
}

}  // namespace hetccl
