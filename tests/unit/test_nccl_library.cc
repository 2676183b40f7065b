// Loading the real NCCL without recursion. The CUDA toolkit on the
// development and CI machines ships NCCL, which loads and answers
// ncclGetVersion without a GPU.
#include "vendor/nccl/nccl_library.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
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

// A PyTorch wheel's NVIDIA packages: cuBLAS mapped into the process (as
// PyTorch maps it), NCCL in its sibling package, found through the mapping
// before every system path.
TEST(NcclLibrary, FindsNcclBesideAMappedWheelPackage) {
  SKIP_UNDER_ASAN();
  if (access(kToolkitNccl, R_OK) != 0)
    GTEST_SKIP() << "no NCCL at " << kToolkitNccl;
  namespace fs = std::filesystem;
  std::string root = fs::temp_directory_path() / "nccl-wheel-XXXXXX";
  ASSERT_NE(mkdtemp(root.data()), nullptr);
  fs::path nvidia = fs::path(root) / "site-packages" / "nvidia";
  fs::create_directories(nvidia / "cublas" / "lib");
  fs::create_directories(nvidia / "nccl" / "lib");
  std::string wheelNccl = nvidia / "nccl" / "lib" / "libnccl.so.2";
  fs::create_symlink(kToolkitNccl, wheelNccl);
  std::string cublas = nvidia / "cublas" / "lib" / "libcublas.so.12";
  int fd = open(cublas.c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 4096), 0);
  void* mapping = mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  ASSERT_NE(mapping, MAP_FAILED);

  ScopedEnv path("HETCCL_NCCL_LIBRARY", nullptr);
  auto paths = NcclLibrary::candidatePaths();
  std::string loaded = NcclLibrary::load()->path();
  munmap(mapping, 4096);
  fs::remove_all(root);
  ASSERT_FALSE(paths.empty());
  EXPECT_EQ(paths.front(), wheelNccl);
  EXPECT_EQ(loaded, wheelNccl);
}

TEST(NcclLibrary, SearchesTheToolkitLast) {
  ScopedEnv path("HETCCL_NCCL_LIBRARY", nullptr);
  auto paths = NcclLibrary::candidatePaths();
  ASSERT_FALSE(paths.empty());
  EXPECT_EQ(paths.back(), kToolkitNccl);
}

}  // namespace
}  // namespace hetccl
