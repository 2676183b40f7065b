// The disagreement check (tests/mp/harness/call_mismatch.h) on two hosts
// made of network namespaces (two_namespaces.h): ranks 0 and 1 on the
// first, 2 and 3 on the second, so the disagreeing half is the second
// host's; CPU ranks and emulated GPU ranks, a domain per host.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "harness/call_mismatch.h"
#include "harness/domains.h"
#include "two_namespaces.h"

namespace hetccl::mp {
namespace {

constexpr int kRanksPerHost = 2;

class NetnsCallMismatchTest : public ::testing::TestWithParam<MismatchCase> {};

TEST_P(NetnsCallMismatchTest, EveryRankFailsNamingBothCalls) {
  const std::optional<RunOptions> options = ranksOnTwoNamespaces(kRanksPerHost);
  if (!options) GTEST_SKIP() << kNeedsTwoNamespaces;
  runMismatchCase(GetParam(), *options);
}

std::string caseName(const ::testing::TestParamInfo<MismatchCase>& info) {
  return info.param.name();
}

std::vector<MismatchCase> cases() {
  return mismatchMatrix({domainPerHost(kNamespaceHosts, false),
                         domainPerHost(kNamespaceHosts, true)},
                        kNamespaceHosts * kRanksPerHost);
}

INSTANTIATE_TEST_SUITE_P(Netns, NetnsCallMismatchTest,
                         ::testing::ValuesIn(cases()), caseName);

}  // namespace
}  // namespace hetccl::mp
