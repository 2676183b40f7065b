#include <string>

#include "api/api_call.h"
#include "util/log.h"

namespace hetccl {
namespace {

// NCCL keeps the last error per thread; so does HetCCL.
thread_local std::string lastErrorText;

}  // namespace

void setLastError(const char* function, const Error& error) {
  lastErrorText = std::string(function) + ": " + error.what();
  LOG_WARN(kLogInit, "%s", lastErrorText.c_str());
}

const char* lastError() { return lastErrorText.c_str(); }

}  // namespace hetccl
