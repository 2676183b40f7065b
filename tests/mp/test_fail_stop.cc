// No silent wrong results when a rank leaves, in every layout of one host
// (harness/fail_stop.h says what each case checks).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "harness/domains.h"
#include "harness/fail_stop.h"

namespace hetccl::mp {
namespace {

constexpr int kRanks = 3;
constexpr int kLeaving = 1;

class FailStopTest : public ::testing::TestWithParam<FailStopCase> {};

TEST_P(FailStopTest, SurvivorsNeverSucceedWithAWrongResult) {
  const FailStopCase& param = GetParam();
  if (param.layout.env.count("HETCCL_TRANSPORT") &&
      param.layout.env.at("HETCCL_TRANSPORT") == "ucx" && !ucxModuleBuilt())
    GTEST_SKIP() << "this build has no UCX module";
  runFailStopCase(param);
}

DomainLayout withTransport(DomainLayout layout, const char* transport) {
  layout.env["HETCCL_TRANSPORT"] = transport;
  return layout;
}

// Every stream of a GPU rank in one hardware queue (as
// CUDA_DEVICE_MAX_CONNECTIONS=1): a survivor's failed operation and its
// abort must not leave work stuck behind a wait in the queue.
DomainLayout inOneQueue(DomainLayout layout) {
  layout.env["HETCCL_EMULATED_QUEUES"] = "1";
  return layout;
}

std::vector<FailStopCase> matrix() {
  const std::vector<std::pair<std::string, DomainLayout>> layouts = {
      {"oneCpuDomain", oneDomain()},
      {"cpuDomainsShm", domainsByLabel({0, 1, 0})},
      {"cpuDomainsTcp", withTransport(domainsByLabel({0, 1, 0}), "tcp")},
      {"cpuHostsUcx", ucxBetweenPretendHosts({0, 1, 0})},
      {"gpuShm", emulatedGpuDomains({0, 1, 2})},
      {"gpuTcp", withTransport(emulatedGpuDomains({0, 1, 2}), "tcp")},
      {"gpuCaptured", emulatedCapturesOverTcp({0, 1, 2})},
      {"gpuTcpOneQueue",
       inOneQueue(withTransport(emulatedGpuDomains({0, 1, 2}), "tcp"))},
  };
  return failStopMatrix(layouts, kRanks, kLeaving);
}

INSTANTIATE_TEST_SUITE_P(
    Mp, FailStopTest, ::testing::ValuesIn(matrix()),
    [](const ::testing::TestParamInfo<FailStopCase>& info) {
      return info.param.name();
    });

}  // namespace
}  // namespace hetccl::mp
