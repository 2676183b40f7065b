// The boundary between the C API and the C++ library: every exported
// function runs its body through apiCall, which turns a thrown Error into
// the return code, the message of ncclGetLastError and a WARN log line.
#pragma once

#include "api/hand_back.h"
#include "nccl.h"
#include "util/error.h"

#define HETCCL_EXPORT extern "C" __attribute__((visibility("default")))

// Defines `name` and its profiling alias `p##name` (NCCL's PMPI-style
// interface) as one function.
#define HETCCL_API(ret, name, ...)                                      \
  HETCCL_EXPORT ret name(__VA_ARGS__);                                  \
  HETCCL_EXPORT __attribute__((alias(#name))) ret p##name(__VA_ARGS__); \
  ret name(__VA_ARGS__)

// Hands a call that NVIDIA's NCCL made to its own API back to it (see
// ncclCalling): NCCL's handles and memory are not HetCCL's.
#define HETCCL_RETURN_TO_NCCL(function, ...)                  \
  if (const ::hetccl::NcclApi* nccl =                         \
          ::hetccl::ncclCalling(__builtin_return_address(0)); \
      nccl != nullptr && nccl->function != nullptr)           \
  return nccl->function(__VA_ARGS__)

namespace hetccl {

void setLastError(const char* function, const Error& error);
const char* lastError();

template <typename Body>
ncclResult_t apiCall(const char* function, Body&& body) {
  try {
    return body();
  } catch (...) {
    Error error = currentExceptionAsError();
    setLastError(function, error);
    return error.code();
  }
}

}  // namespace hetccl
