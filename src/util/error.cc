#include "util/error.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

namespace hetccl {

std::string vformat(const char* fmt, va_list args) {
  va_list copy;
  va_copy(copy, args);
  int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  if (n <= 0) return std::string();
  std::string out(static_cast<size_t>(n), '\0');
  std::vsnprintf(&out[0], out.size() + 1, fmt, args);
  return out;
}

std::string format(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::string out = vformat(fmt, args);
  va_end(args);
  return out;
}

void fail(ncclResult_t code, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::string message = vformat(fmt, args);
  va_end(args);
  throw Error(code, message);
}

void failErrno(const char* fmt, ...) {
  int saved = errno;
  va_list args;
  va_start(args, fmt);
  std::string message = vformat(fmt, args);
  va_end(args);
  throw Error(ncclSystemError, message + ": " + std::strerror(saved));
}

Error currentExceptionAsError() {
  try {
    throw;
  } catch (const Error& e) {
    return e;
  } catch (const std::bad_alloc&) {
    return Error(ncclSystemError, "out of host memory");
  } catch (const std::exception& e) {
    return Error(ncclInternalError, e.what());
  } catch (...) {
    return Error(ncclInternalError, "an unknown exception");
  }
}

}  // namespace hetccl
