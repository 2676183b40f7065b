// The domain back-end registry: one back-end per runtime, the host collectives
// running a domain through the Executor interface, and the library
// features only a vendor library has.
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "api/hand_back.h"
#include "domain/domain_backend.h"
#include "domain/nccl_api/nccl_api_backend.h"
#include "support/in_process_oob.h"
#include "support/thread_ranks.h"

namespace hetccl {
namespace {

TEST(DomainBackends, OnePerRuntime) {
  EXPECT_STREQ(domainBackendFor(RuntimeKind::Host).name(), "host collectives");
  EXPECT_STREQ(domainBackendFor(RuntimeKind::Cuda).name(), "NCCL");
  EXPECT_STREQ(domainBackendFor(RuntimeKind::Hip).name(), "RCCL");
  std::set<RuntimeKind> runtimes;
  for (const DomainBackend* backend : registeredDomainBackends())
    EXPECT_TRUE(runtimes.insert(backend->runtime()).second) << backend->name();
  EXPECT_EQ(runtimes.size(), 3u);
}

TEST(DomainBackends, TheHostCollectivesHaveNoLibrary) {
  EXPECT_EQ(ncclApiBackendFor(RuntimeKind::Host), nullptr);
}

// Asking which library a call comes from loads none.
TEST(DomainBackends, TheHandBackLoadsNoLibrary) {
  int local = 0;
  EXPECT_EQ(ncclCalling(&local), nullptr);
  EXPECT_TRUE(loadedNcclApiLibraries().empty());
}

TEST(DomainBackends, TheHostCollectivesRunADomainThroughTheExecutorInterface) {
  constexpr int kRanks = 3;
  const BackendSettings settings = BackendSettings::fromEnvironment();
  InProcessWorld world(kRanks);
  std::vector<std::vector<float>> data(kRanks, std::vector<float>(5));
  runRanks(kRanks, [&](int rank) {
    InProcessOob oob(world, rank);
    auto abort = std::make_shared<AbortSignal>();
    std::shared_ptr<Executor> executor =
        domainBackendFor(RuntimeKind::Host)
            .create({oob, settings, /*timeoutSeconds=*/0, -1, abort, nullptr});
    EXPECT_EQ(executor->libraryFeatures(), nullptr);
    for (size_t i = 0; i < data[rank].size(); ++i)
      data[rank][i] = static_cast<float>(rank + i);
    Op op;
    op.kind = OpKind::AllReduce;
    op.sendbuff = data[rank].data();
    op.recvbuff = data[rank].data();
    op.count = data[rank].size();
    op.dtype = ncclFloat32;
    executor->launch({op}, nullptr);  // NULL stream: done on return
    EXPECT_TRUE(executor->drain(10));
  });
  for (int rank = 0; rank < kRanks; ++rank)
    for (size_t i = 0; i < 5; ++i)
      EXPECT_EQ(data[rank][i], 3.0f * i + 3.0f) << rank << " " << i;
}

}  // namespace
}  // namespace hetccl
