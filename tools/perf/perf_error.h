// Errors of the perf tool. The tool sees HetCCL only through the public API,
// so it has its own error type: a message that main() prints before exiting.
#pragma once

#include <stdexcept>
#include <string>

namespace hetccl {
namespace perf {

class PerfError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// printf-style formatting into a std::string.
std::string strprintf(const char* fmt, ...)
    __attribute__((format(printf, 1, 2)));

// Throws PerfError with the formatted message.
[[noreturn]] void perfFail(const char* fmt, ...)
    __attribute__((format(printf, 1, 2)));

}  // namespace perf
}  // namespace hetccl
