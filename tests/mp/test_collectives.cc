// Every collective x every data type x every reduction op, with counts from
// 0 to a million, in place and out of place, every root, on host streams
// and on the NULL stream, across 2, 3, 4 and 8 processes. Each rank checks
// every output byte against the inputs of all ranks, and the outputs that
// must be identical everywhere are compared bitwise across ranks.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "harness/case_batches.h"
#include "harness/check.h"
#include "harness/collective_case.h"
#include "harness/data.h"
#include "harness/domains.h"
#include "harness/nccl_handles.h"
#include "harness/run_ranks.h"
#include "harness/test_params.h"
#include "kit/dtype.h"

namespace hetccl::mp {
namespace {

// Cases issued on a host stream before one synchronize.
constexpr size_t kStreamBatch = 4;
constexpr size_t kLargeCount = (size_t{1} << 20) + 3;

// Builds the list of cases every rank runs, in the same order.
class CaseList {
 public:
  CaseList(Collective collective, int nranks)
      : collective_(collective),
        nranks_(nranks),
        seed_(mixBits(0x4d50, static_cast<uint64_t>(collective), nranks)) {}

  std::vector<CollectiveCase> build() {
    if (isReducing(collective_)) {
      addReductionMatrix();
    } else {
      addMovementMatrix();
    }
    addEveryRoot();
    addLarge();
    return cases_;
  }

 private:
  size_t randomCount(size_t low, size_t high) {
    return low + mixBits(seed_, cases_.size(), 0xc0) % (high - low + 1);
  }

  void add(ncclDataType_t type, TestOp op, size_t count) {
    CollectiveCase c;
    c.collective = collective_;
    c.type = type;
    c.op = op;
    c.count = count;
    size_t index = cases_.size();
    c.inPlace = supportsInPlace(collective_) && index % 2 == 1;
    c.root = static_cast<int>(index % nranks_);
    // Runs of kStreamBatch cases alternate between the NULL stream and a
    // host stream.
    c.onStream = (index / kStreamBatch) % 2 == 1;
    c.seed = mixBits(seed_, index, 0x5eed);
    cases_.push_back(c);
  }

  // Every (type, op) pair, each with a few counts (in and out of place
  // alternate), plus zero and mid-sized counts for every type.
  void addReductionMatrix() {
    // Eight ranks share two cores four ways: fewer counts there.
    bool crowded = nranks_ > 4;
    for (const kit::DataType& dataType : kit::allDataTypes()) {
      const ncclDataType_t type = dataType.nccl;
      for (TestOp op : allTestOps()) {
        add(type, op, 1);
        add(type, op, 7);
        if (!crowded) add(type, op, randomCount(2, 300));
      }
      add(type, TestOp::kSum, 0);
      add(type, TestOp::kSum, 0);
      add(type, TestOp::kSum, crowded ? 1021 : randomCount(1000, 20000));
      add(type, TestOp::kMax, crowded ? 4099 : randomCount(1000, 20000));
    }
  }

  void addMovementMatrix() {
    for (const kit::DataType& dataType : kit::allDataTypes()) {
      const ncclDataType_t type = dataType.nccl;
      for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{31}}) {
        add(type, TestOp::kSum, count);
      }
      add(type, TestOp::kSum, randomCount(2, 500));
      add(type, TestOp::kSum, randomCount(500, 5000));
    }
  }

  // Small cases at each root, in and out of place.
  void addEveryRoot() {
    if (!hasRoot(collective_)) return;
    for (int root = 0; root < nranks_; ++root) {
      for (size_t count : {size_t{1}, size_t{7}}) {
        for (int variant = 0; variant < 2; ++variant) {
          add(count == 1 ? ncclInt32 : ncclFloat32, TestOp::kSum, count);
          cases_.back().root = root;
        }
      }
    }
  }

  // A million elements in total: float32 only.
  void addLarge() {
    bool perRank = isSplitAcrossRanks(collective_);
    size_t count = perRank ? (size_t{1} << 20) / nranks_ + 3 : kLargeCount;
    add(ncclFloat32, TestOp::kSum, count);
    if (nranks_ <= 4) add(ncclFloat32, TestOp::kAvg, count);
  }

  Collective collective_;
  int nranks_;
  uint64_t seed_;
  std::vector<CollectiveCase> cases_;
};

void runCases(RankContext& ctx, const std::vector<CollectiveCase>& cases,
              int expectedDomains) {
  Comm comm(ctx.initComm());
  checkDomainCount(comm.get(), expectedDomains);
  runAndCheckCases(ctx, comm.get(), cases, kStreamBatch);
  comm.destroy();
}

class CollectivesTest : public ::testing::TestWithParam<CollectiveParam> {};

TEST_P(CollectivesTest, AllTypesOpsCountsAndRoots) {
  const CollectiveParam& param = GetParam();
  std::vector<CollectiveCase> cases =
      CaseList(param.collective, param.nranks).build();
  RunOptions options;
  options.timeoutSeconds = 240;
  param.domains.applyTo(&options);
  int expectedDomains = param.domains.count();
  runRanks(
      param.nranks,
      [&](RankContext& ctx) { runCases(ctx, cases, expectedDomains); },
      options);
}

// For each size, one domain and one forced split into domains: even
// (1+1), uneven (1+2, 2+6) and interleaved (ranks 0,2 | 1,3).
std::vector<DomainLayout> layoutsFor(int nranks) {
  switch (nranks) {
    case 2:
      return {oneDomain(), domainsByLabel({0, 1})};
    case 3:
      return {oneDomain(), domainsByLabel({0, 1, 1})};
    case 4:
      return {oneDomain(), domainsByLabel({0, 1, 0, 1})};
    default:
      return {oneDomain(), domainsByLabel({0, 0, 1, 1, 1, 1, 1, 1})};
  }
}

std::vector<CollectiveParam> allParams() {
  std::vector<CollectiveParam> params;
  for (int nranks : {2, 3, 4, 8}) {
    for (const DomainLayout& layout : layoutsFor(nranks)) {
      for (Collective collective : allCollectives()) {
        params.push_back({nranks, collective, layout});
      }
    }
  }
  return params;
}

std::string paramName(const ::testing::TestParamInfo<CollectiveParam>& info) {
  return info.param.name();
}

INSTANTIATE_TEST_SUITE_P(Mp, CollectivesTest, ::testing::ValuesIn(allParams()),
                         paramName);

// A mixed batch of small cases of every collective kind, roots rotating.
std::vector<CollectiveCase> mixedCases(int nranks, bool onStream,
                                       size_t repeats) {
  const TestOp ops[] = {TestOp::kSum, TestOp::kPreMulSumHost,
                        TestOp::kPreMulSumDevice, TestOp::kMax};
  const ncclDataType_t types[] = {ncclInt32, ncclFloat32, ncclBfloat16,
                                  ncclUint8};
  std::vector<CollectiveCase> cases;
  for (size_t repeat = 0; repeat < repeats; ++repeat) {
    for (Collective collective : allCollectives()) {
      size_t index = cases.size();
      CollectiveCase c;
      c.collective = collective;
      c.type = types[index % 4];
      c.op = ops[(index / 4) % 4];
      c.count = 37 + index % 5;
      c.inPlace = supportsInPlace(collective) && index % 3 == 0;
      c.root = static_cast<int>(index % nranks);
      c.onStream = onStream;
      c.seed = 1000 + index;
      cases.push_back(c);
    }
  }
  return cases;
}

// Issues every case (inside a group if asked), then checks them all.
void issueAllThenVerify(RankContext& ctx,
                        const std::vector<CollectiveCase>& cases, bool grouped,
                        int expectedDomains = 1) {
  Comm comm(ctx.initComm());
  checkDomainCount(comm.get(), expectedDomains);
  HostStream stream;
  std::vector<std::unique_ptr<CollectiveRun>> runs;
  if (grouped) MP_CHECK_NCCL(ncclGroupStart());
  for (const CollectiveCase& c : cases) {
    runs.push_back(std::make_unique<CollectiveRun>(c, comm.get(), ctx.rank(),
                                                   ctx.nranks()));
    MP_CHECK_NCCL(runs.back()->issue(c.onStream ? stream.get() : nullptr))
        << c.describe();
  }
  if (grouped) MP_CHECK_NCCL(ncclGroupEnd());
  if (cases.front().onStream) {
    stream.synchronize();
    MP_CHECK_NCCL(hetcclStreamQuery(stream.get())) << "idle after sync";
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    std::string problem = runs[i]->verify();
    MP_CHECK(problem.empty()) << cases[i].describe() << ": " << problem;
  }
  comm.destroy();
}

// Many collectives of every kind queued on one host stream before a single
// synchronize must complete in order with correct results.
TEST(CollectivesQueue, ManyKindsOnOneStreamThenOneSynchronize) {
  runRanks(3, [](RankContext& ctx) {
    issueAllThenVerify(ctx, mixedCases(ctx.nranks(), true, 8), false);
  });
}

struct GroupParam {
  bool onStream;
  DomainLayout domains;

  std::string name() const {
    return std::string(onStream ? "HostStream" : "NullStream") + "_" +
           domains.name();
  }
};

void PrintTo(const GroupParam& param, std::ostream* out) {
  *out << param.name();
}

class CollectivesGroupTest : public ::testing::TestWithParam<GroupParam> {};

// Collectives of every kind in one group. PreMulSum ops are destroyed as
// soon as their call returns, before ncclGroupEnd, which NCCL allows.
TEST_P(CollectivesGroupTest, EveryKindInOneGroup) {
  GroupParam param = GetParam();
  RunOptions options;
  param.domains.applyTo(&options);
  runRanks(
      4,
      [&](RankContext& ctx) {
        issueAllThenVerify(ctx, mixedCases(ctx.nranks(), param.onStream, 2),
                           true, param.domains.count());
      },
      options);
}

INSTANTIATE_TEST_SUITE_P(
    Mp, CollectivesGroupTest,
    ::testing::Values(GroupParam{false, oneDomain()},
                      GroupParam{true, oneDomain()},
                      GroupParam{false, domainsByLabel({0, 1, 1, 0})},
                      GroupParam{true, domainsByLabel({0, 1, 1, 0})}),
    [](const ::testing::TestParamInfo<GroupParam>& info) {
      return info.param.name();
    });

}  // namespace
}  // namespace hetccl::mp
