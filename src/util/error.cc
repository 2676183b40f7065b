#include "util/error.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

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

}  // namespace hetccl
