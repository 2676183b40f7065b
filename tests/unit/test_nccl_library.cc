// Loading the real NCCL without recursion. The CUDA toolkit on the
// development and CI machines ships NCCL, which loads and answers
// ncclGetVersion without a GPU.
#include "vendor/nccl/nccl_library.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "support/scoped_env.h"
#include "util/error.h"

namespace hetccl {
namespace {

std::string errorOf(void (*body)()) {
  try {
    body();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ncclSystemError);
    return e.what();
  }
  return "";
}

const char* kToolkitNccl = "/usr/local/cuda/lib64/libnccl.so.2";

// AddressSanitizer refuses dlopen with RTLD_DEEPBIND (sanitizers issue
// 611), so the tests that load a library skip in sanitizer builds.
#if defined(__SANITIZE_ADDRESS__)
#define SKIP_UNDER_ASAN() \
  GTEST_SKIP() << "RTLD_DEEPBIND cannot be used under AddressSanitizer"
#else
#define SKIP_UNDER_ASAN() (void)0
#endif

TEST(NcclLibrary, LoadsTheRealLibraryAndCallsIntoIt) {
  SKIP_UNDER_ASAN();
  if (access(kToolkitNccl, R_OK) != 0)
    GTEST_SKIP() << "no NCCL at " << kToolkitNccl;
  ScopedEnv path("HETCCL_NCCL_LIBRARY", kToolkitNccl);
  auto nccl = NcclLibrary::load();
  EXPECT_EQ(nccl->path(), kToolkitNccl);
  EXPECT_GE(nccl->version(), 22000);
  // The answer comes from NCCL itself, not from HetCCL's export.
  const char* text = nccl->api().GetErrorString(ncclInvalidUsage);
  ASSERT_NE(text, nullptr);
  EXPECT_NE(text, ::ncclGetErrorString(ncclInvalidUsage));
  EXPECT_NE(reinterpret_cast<void*>(nccl->api().AllReduce),
            reinterpret_cast<void*>(&::ncclAllReduce));
}

TEST(NcclLibrary, RefusesHetcclItself) {
  SKIP_UNDER_ASAN();
  ScopedEnv path("HETCCL_NCCL_LIBRARY", HETCCL_DROPIN_NCCL);
  std::string message = errorOf([] { NcclLibrary::load(); });
  EXPECT_NE(message.find("this is HetCCL"), std::string::npos) << message;
}

TEST(NcclLibrary, NamesWhatItTried) {
  ScopedEnv path("HETCCL_NCCL_LIBRARY", "/nonexistent/libnccl.so.2");
  std::string message = errorOf([] { NcclLibrary::load(); });
  EXPECT_NE(message.find("HETCCL_NCCL_LIBRARY"), std::string::npos);
  EXPECT_NE(message.find("/nonexistent/libnccl.so.2: not found"),
            std::string::npos)
      << message;
}

TEST(NcclLibrary, SearchesTheToolkitLast) {
  ScopedEnv path("HETCCL_NCCL_LIBRARY", nullptr);
  auto paths = NcclLibrary::candidatePaths();
  ASSERT_FALSE(paths.empty());
  EXPECT_EQ(paths.back(), kToolkitNccl);
}

}  // namespace
}  // namespace hetccl
