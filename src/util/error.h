// The error type that carries an ncclResult_t and a message through the
// library; the API layer turns it into a return code and ncclGetLastError.
#pragma once

#include <cstdarg>
#include <stdexcept>
#include <string>

#include "nccl.h"

namespace hetccl {

class Error : public std::runtime_error {
 public:
  Error(ncclResult_t code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  ncclResult_t code() const { return code_; }

 private:
  ncclResult_t code_;
};

// printf-style formatting into a std::string.
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string vformat(const char* fmt, va_list args);

// Throws Error(code, formatted message).
[[noreturn]] void fail(ncclResult_t code, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));

// Throws ncclSystemError with the message and strerror(errno).
[[noreturn]] void failErrno(const char* fmt, ...)
    __attribute__((format(printf, 1, 2)));

// The exception being handled, as an Error; only inside a catch block.
// std::bad_alloc becomes ncclSystemError "out of host memory", any other
// exception ncclInternalError with its message. Thread entry points and
// the API boundary catch everything through this, so that no exception
// ends the process and every failure reaches the communicator's error.
Error currentExceptionAsError();

// Checks an argument; throws ncclInvalidArgument with the message if false.
#define HETCCL_CHECK_ARG(cond, ...)                                \
  do {                                                             \
    if (!(cond)) ::hetccl::fail(ncclInvalidArgument, __VA_ARGS__); \
  } while (0)

}  // namespace hetccl
