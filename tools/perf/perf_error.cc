#include "perf/perf_error.h"

#include <cstdarg>
#include <cstdio>

namespace hetccl {
namespace perf {
namespace {

std::string vstrprintf(const char* fmt, va_list args) {
  va_list copy;
  va_copy(copy, args);
  int length = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  if (length <= 0) return std::string();
  std::string text(static_cast<size_t>(length) + 1, '\0');
  std::vsnprintf(&text[0], text.size(), fmt, args);
  text.resize(static_cast<size_t>(length));
  return text;
}

}  // namespace

std::string strprintf(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::string text = vstrprintf(fmt, args);
  va_end(args);
  return text;
}

void perfFail(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::string text = vstrprintf(fmt, args);
  va_end(args);
  throw PerfError(text);
}

}  // namespace perf
}  // namespace hetccl
