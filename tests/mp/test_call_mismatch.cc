// Ranks whose calls disagree fail naming both calls
// (harness/call_mismatch.h says what each case checks), in every layout of
// one host: one CPU domain; two CPU domains over shm, tcp and ucx; GPU
// ranks emulated on the host over tcp (every other launch as a graph's
// replay, too) and over shm on the stream-driven path; two domains of two ranks
// over shm and tcp, CPU and emulated GPU ranks.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/call_mismatch.h"
#include "harness/domains.h"

namespace hetccl::mp {
namespace {

class CallMismatchTest : public ::testing::TestWithParam<MismatchCase> {};

TEST_P(CallMismatchTest, EveryRankFailsNamingBothCalls) {
  runMismatchCase(GetParam());
}

DomainLayout over(DomainLayout layout, const std::string& transport) {
  layout.env["HETCCL_TRANSPORT"] = transport;
  return layout;
}

std::vector<MismatchCase> allCases() {
  return mismatchMatrix({
      oneDomain(),
      over(domainsByLabel({0, 1}), "shm"),
      over(domainsByLabel({0, 1}), "tcp"),
      ucxBetweenPretendHosts({0, 1}),
      over(emulatedGpuDomains({0, 1}), "tcp"),
      emulatedGpuDomains({0, 1}),  // the stream-driven path
      emulatedCapturesOverTcp({0, 1}),
      over(domainsByLabel({0, 0, 1, 1}), "shm"),
      over(domainsByLabel({0, 0, 1, 1}), "tcp"),
      over(emulatedGpuDomains({0, 0, 1, 1}), "tcp"),
  });
}

INSTANTIATE_TEST_SUITE_P(
    Matrix, CallMismatchTest, ::testing::ValuesIn(allCases()),
    [](const ::testing::TestParamInfo<MismatchCase>& info) {
      return info.param.name();
    });

}  // namespace
}  // namespace hetccl::mp
