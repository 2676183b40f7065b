// What the tests of the vendor library loaders (NCCL, RCCL) share: the real
// NCCL of the CUDA toolkit, which loads and answers without a GPU, and the
// skips for machines or builds where a library cannot be loaded.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "support/expect_error.h"

namespace hetccl {

inline constexpr const char* kToolkitNccl =
    "/usr/local/cuda/lib64/libnccl.so.2";

// The message of the ncclSystemError that `load` must throw.
template <typename Load>
std::string systemErrorOf(Load load) {
  Error error = expectError(load);
  EXPECT_EQ(error.code(), ncclSystemError);
  return error.what();
}

}  // namespace hetccl

// AddressSanitizer refuses dlopen with RTLD_DEEPBIND (sanitizers issue
// 611), so the tests that load a library skip in sanitizer builds.
#if defined(__SANITIZE_ADDRESS__)
#define SKIP_UNDER_ASAN() \
  GTEST_SKIP() << "RTLD_DEEPBIND cannot be used under AddressSanitizer"
#else
#define SKIP_UNDER_ASAN() (void)0
#endif

// Skips unless the toolkit's NCCL can be loaded; more text may follow with
// <<, for the skip message.
#define REQUIRE_TOOLKIT_NCCL()                   \
  SKIP_UNDER_ASAN();                             \
  if (access(::hetccl::kToolkitNccl, R_OK) != 0) \
  GTEST_SKIP() << "no NCCL at " << ::hetccl::kToolkitNccl
