// The one-shot plans of small heterogeneous all-reduces and
// reduce-scatters (one exchange across domains, every rank combining all
// domains' partials itself), all-gathers (every block straight to every
// rank of the other domains), broadcasts (the root's buffer straight to
// every rank of the other domains) and reduces (each domain's partial
// from one rank straight to the root) at the edge of their regime: with
// HETCCL_ONE_SHOT_MAX=256, every type (and every op of the reductions) at
// counts just below, at and just above 256 bytes (the pipelined plans from
// there), 0 and 1 elements, in place and out of place, on even, uneven and
// three-domain layouts and on emulated GPU ranks. Every output byte is
// checked, and every rank's result compared bitwise with the others'.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/case_batches.h"
#include "harness/collective_case.h"
#include "harness/data.h"
#include "harness/domains.h"
#include "kit/dtype.h"

namespace hetccl::mp {
namespace {

constexpr size_t kThresholdBytes = 256;
constexpr size_t kStreamBatch = 4;

void addCase(std::vector<CollectiveCase>& cases, Collective collective,
             ncclDataType_t type, TestOp op, size_t count, int nranks) {
  CollectiveCase c;
  c.collective = collective;
  c.type = type;
  c.op = op;
  c.count = count;
  c.inPlace = cases.size() % 2 == 1;
  c.onStream = (cases.size() / kStreamBatch) % 2 == 1;
  c.root = static_cast<int>(cases.size() % nranks);
  c.seed = mixBits(0x0e5407, cases.size(), nranks);
  cases.push_back(c);
}

// All-reduces, reduce-scatters and reduces (to every root in turn) of every
// type and op, all-gathers and broadcasts (from every root in turn) of
// every type, at the element
// counts around the threshold (an all-gather's is its output's, a
// reduce-scatter's its input's).
std::vector<CollectiveCase> edgeCases(int nranks) {
  std::vector<CollectiveCase> cases;
  for (const kit::DataType& type : kit::allDataTypes()) {
    for (Collective collective :
         {Collective::kAllReduce, Collective::kAllGather,
          Collective::kReduceScatter, Collective::kBroadcast,
          Collective::kReduce}) {
      const bool perRankCount = isSplitAcrossRanks(collective);
      const size_t perRank = perRankCount ? nranks * type.size : type.size;
      const size_t atThreshold = kThresholdBytes / perRank;
      const size_t counts[] = {0, 1, atThreshold - 1, atThreshold,
                               atThreshold + 1};
      const std::vector<TestOp> ops = isReducing(collective)
                                          ? allTestOps()
                                          : std::vector<TestOp>{TestOp::kSum};
      for (TestOp op : ops)
        for (size_t count : counts)
          addCase(cases, collective, type.nccl, op, count, nranks);
    }
  }
  return cases;
}

class OneShotTest : public ::testing::TestWithParam<DomainLayout> {};

TEST_P(OneShotTest, EveryOneShotPlanAroundTheThreshold) {
  const DomainLayout& layout = GetParam();
  runCasesOnLayout(layout, edgeCases(static_cast<int>(layout.labels.size())),
                   kStreamBatch,
                   {{"HETCCL_ONE_SHOT_MAX", std::to_string(kThresholdBytes)}});
}

INSTANTIATE_TEST_SUITE_P(
    Mp, OneShotTest,
    ::testing::Values(domainsByLabel({0, 0, 1, 1}), domainsByLabel({0, 1, 1}),
                      domainsByLabel({0, 1, 2, 2}),
                      emulatedGpuDomains({0, 0, 1, 1}),
                      emulatedGpuDomains({0, 1, 1})),
    [](const ::testing::TestParamInfo<DomainLayout>& info) {
      return info.param.name();
    });

}  // namespace
}  // namespace hetccl::mp
