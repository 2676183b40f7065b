// Loading the real NCCL without recursion. The CUDA toolkit on the
// development and CI machines ships NCCL, which loads and answers
// ncclGetVersion without a GPU.
#include "domain/nccl/nccl_library.h"

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "domain/nccl_api/nccl_api_comm.h"
#include "support/in_process_oob.h"
#include "support/library_loading.h"
#include "support/mapped_file.h"
#include "support/scoped_env.h"
#include "support/temp_dir.h"
#include "support/thread_ranks.h"
#include "util/error.h"

namespace hetccl {
namespace {

std::string loadFailure() {
  return systemErrorOf([] { NcclLibrary::load(); });
}

TEST(NcclLibrary, LoadsTheRealLibraryAndCallsIntoIt) {
  REQUIRE_TOOLKIT_NCCL();
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
  std::string message = loadFailure();
  EXPECT_NE(message.find("this is HetCCL"), std::string::npos) << message;
}

TEST(NcclLibrary, NamesWhatItTried) {
  ScopedEnv path("HETCCL_NCCL_LIBRARY", "/nonexistent/libnccl.so.2");
  std::string message = loadFailure();
  EXPECT_NE(message.find("HETCCL_NCCL_LIBRARY"), std::string::npos);
  EXPECT_NE(message.find("/nonexistent/libnccl.so.2: not found"),
            std::string::npos)
      << message;
}

// A PyTorch wheel's NVIDIA packages: cuBLAS mapped into the process (as
// PyTorch maps it), NCCL in its sibling package, found through the mapping
// before every system path.
TEST(NcclLibrary, FindsNcclBesideAMappedWheelPackage) {
  REQUIRE_TOOLKIT_NCCL();
  TempDir root;
  std::string wheelNccl =
      root.link("site-packages/nvidia/nccl/lib/libnccl.so.2", kToolkitNccl);
  MappedFile cublas(
      root.place("site-packages/nvidia/cublas/lib/libcublas.so.12"));

  ScopedEnv path("HETCCL_NCCL_LIBRARY", nullptr);
  auto paths = NcclLibrary::candidatePaths();
  std::string loaded = NcclLibrary::load()->path();
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

// A node without the library fails every rank's init at once, each naming
// that node and why, instead of the others waiting for it in the library's
// own init until the bootstrap timeout.
TEST(NcclDomain, ANodeWithoutTheLibraryFailsEveryRankAtOnce) {
  REQUIRE_TOOLKIT_NCCL();
  ScopedEnv path("HETCCL_NCCL_LIBRARY", kToolkitNccl);
  auto nccl = NcclLibrary::load();
  constexpr int kRanks = 3;
  InProcessWorld world(kRanks);
  std::vector<std::optional<Error>> errors(kRanks);
  auto start = std::chrono::steady_clock::now();
  runRanks(kRanks, [&](int rank) {
    InProcessOob oob(world, rank);
    auto load = [&]() -> const NcclApiLibrary& {
      if (rank == 0) fail(ncclSystemError, "no NCCL on this node (test)");
      return *nccl;
    };
    try {
      NcclApiComm comm(oob, "NCCL", load, 0, [](int) {});
      ADD_FAILURE() << "rank " << rank << " joined without rank 0";
    } catch (const Error& e) {
      errors[rank] = e;
    }
  });
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  ASSERT_TRUE(errors[0]);
  EXPECT_EQ(errors[0]->code(), ncclSystemError);
  EXPECT_STREQ(errors[0]->what(), "no NCCL on this node (test)");
  for (int rank = 1; rank < kRanks; ++rank) {
    ASSERT_TRUE(errors[rank]) << rank;
    EXPECT_EQ(errors[rank]->code(), ncclRemoteError);
    std::string message = errors[rank]->what();
    for (const char* part :
         {"NCCL domain: rank 0 (host ", "failed while loading NCCL",
          ": no NCCL on this node (test)"})
      EXPECT_NE(message.find(part), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace hetccl
