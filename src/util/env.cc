#include "util/env.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace hetccl {

std::optional<std::string> envString(const char* name, const char* ncclName) {
  if (const char* v = std::getenv(name)) return std::string(v);
  if (ncclName != nullptr)
    if (const char* v = std::getenv(ncclName)) return std::string(v);
  return std::nullopt;
}

bool parseSize(const std::string& text, int64_t* value) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  long long n = std::strtoll(text.c_str(), &end, 0);
  if (errno != 0 || end == text.c_str()) return false;
  int64_t scale = 1;
  switch (*end) {
    case '\0':
      break;
    case 'k':
    case 'K':
      scale = 1LL << 10;
      ++end;
      break;
    case 'm':
    case 'M':
      scale = 1LL << 20;
      ++end;
      break;
    case 'g':
    case 'G':
      scale = 1LL << 30;
      ++end;
      break;
    default:
      return false;
  }
  if (*end == 'B' || *end == 'b') ++end;
  if (*end != '\0') return false;
  *value = static_cast<int64_t>(n) * scale;
  return true;
}

// Warnings here go straight to stderr: the logger itself reads the
// environment through this file, so it cannot be used from here.
int64_t envInt(const char* name, int64_t defaultValue, const char* ncclName) {
  auto text = envString(name, ncclName);
  if (!text) return defaultValue;
  int64_t value = 0;
  if (!parseSize(*text, &value)) {
    std::fprintf(stderr,
                 "HETCCL WARN ignoring %s=\"%s\": not a number, using %lld\n",
                 name, text->c_str(), static_cast<long long>(defaultValue));
    return defaultValue;
  }
  return value;
}

double envSeconds(const char* name, double defaultValue, const char* ncclName) {
  auto text = envString(name, ncclName);
  if (!text) return defaultValue;
  char* end = nullptr;
  double value = std::strtod(text->c_str(), &end);
  if (end == text->c_str() || *end != '\0' || value < 0) {
    std::fprintf(stderr,
                 "HETCCL WARN ignoring %s=\"%s\": not a duration in seconds, "
                 "using %g\n",
                 name, text->c_str(), defaultValue);
    return defaultValue;
  }
  return value;
}

}  // namespace hetccl
