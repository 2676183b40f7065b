// The fail-stop check (tests/mp/harness/fail_stop.h) on two hosts made of
// network namespaces (two_namespaces.h): ranks 0 and 1 on the first, 2 and
// 3 on the second. Rank 2 leaves: rank 3 can learn it on its own host,
// ranks 0 and 1 only over the network.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "harness/domains.h"
#include "harness/fail_stop.h"
#include "two_namespaces.h"

namespace hetccl::mp {
namespace {

constexpr int kRanksPerHost = 2;
constexpr int kLeaving = 2;

class NetnsFailStopTest : public ::testing::TestWithParam<FailStopCase> {};

TEST_P(NetnsFailStopTest, SurvivorsNeverSucceedWithAWrongResult) {
  const std::optional<RunOptions> options = ranksOnTwoNamespaces(kRanksPerHost);
  if (!options) GTEST_SKIP() << kNeedsTwoNamespaces;
  runFailStopCase(GetParam(), *options);
}

std::string caseName(const ::testing::TestParamInfo<FailStopCase>& info) {
  return info.param.name();
}

// CPU ranks and emulated GPU ranks in one matrix, so that the operations
// take turns across both kinds.
std::vector<FailStopCase> cases() {
  return failStopMatrix({{"cpuHosts", domainPerHost(kNamespaceHosts, false)},
                         {"gpuHosts", domainPerHost(kNamespaceHosts, true)}},
                        kNamespaceHosts * kRanksPerHost, kLeaving);
}

INSTANTIATE_TEST_SUITE_P(Netns, NetnsFailStopTest, ::testing::ValuesIn(cases()),
                         caseName);

}  // namespace
}  // namespace hetccl::mp
