#include "algo/domains.h"

#include <gtest/gtest.h>

#include "runtime/runtime.h"
#include "util/error.h"

namespace hetccl {
namespace {

RankPlacement cpuRank(uint64_t host, int label) {
  return RankPlacement{static_cast<int>(RuntimeKind::Host), label, host};
}

ncclResult_t specError(const std::string& spec, int nranks) {
  try {
    domainLabelFromSpec(spec, 0, nranks);
  } catch (const Error& e) {
    return e.code();
  }
  return ncclSuccess;
}

TEST(DomainSpec, ExplicitLabels) {
  EXPECT_EQ(domainLabelFromSpec("0,0,1,1", 1, 4), 0);
  EXPECT_EQ(domainLabelFromSpec("0,0,1,1", 2, 4), 1);
  EXPECT_EQ(domainLabelFromSpec("7,3,7", 1, 3), 3);
}

TEST(DomainSpec, SplitMakesContiguousNearEqualBlocks) {
  std::vector<int> labels;
  for (int r = 0; r < 8; ++r)
    labels.push_back(domainLabelFromSpec("split:3", r, 8));
  EXPECT_EQ(labels, (std::vector<int>{0, 0, 0, 1, 1, 1, 2, 2}));
}

TEST(DomainSpec, EmptyAndHost) {
  EXPECT_EQ(domainLabelFromSpec("", 0, 4), kNoDomainLabel);
  EXPECT_EQ(domainLabelFromSpec("host", 0, 4), kDomainPerHost);
}

TEST(DomainSpec, MalformedSpecsAreInvalidArguments) {
  EXPECT_EQ(specError("0,1", 3), ncclInvalidArgument);
  EXPECT_EQ(specError("0,x,1", 3), ncclInvalidArgument);
  EXPECT_EQ(specError("split:0", 3), ncclInvalidArgument);
  EXPECT_EQ(specError("split:4", 3), ncclInvalidArgument);
  EXPECT_EQ(specError("0,-1,1", 3), ncclInvalidArgument);
}

TEST(DomainMap, OneHostOneLabelIsOneDomain) {
  DomainMap map({cpuRank(1, -1), cpuRank(1, -1), cpuRank(1, -1)});
  EXPECT_EQ(map.count(), 1);
  EXPECT_EQ(map.members(0), (std::vector<int>{0, 1, 2}));
}

TEST(DomainMap, LabelsAndHostsSplitDomainsInOrderOfLowestRank) {
  DomainMap map({cpuRank(1, 1), cpuRank(1, 0), cpuRank(2, 1), cpuRank(1, 1),
                 cpuRank(1, 0)});
  ASSERT_EQ(map.count(), 3);
  EXPECT_EQ(map.members(0), (std::vector<int>{0, 3}));
  EXPECT_EQ(map.members(1), (std::vector<int>{1, 4}));
  EXPECT_EQ(map.members(2), (std::vector<int>{2}));
  EXPECT_EQ(map.domainOf(3), 0);
  EXPECT_EQ(map.localRank(3), 1);
  EXPECT_EQ(map.localRank(4), 1);
}

TEST(DomainMap, RuntimesNeverShareADomain) {
  RankPlacement gpu = cpuRank(1, -1);
  gpu.runtime = static_cast<int>(RuntimeKind::Cuda);
  DomainMap map({cpuRank(1, -1), gpu, cpuRank(1, -1), gpu});
  ASSERT_EQ(map.count(), 2);
  EXPECT_EQ(map.members(1), (std::vector<int>{1, 3}));
}

}  // namespace
}  // namespace hetccl
