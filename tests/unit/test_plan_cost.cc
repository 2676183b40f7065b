// The cost model of the plans across domains (algo/plan_cost.h) against
// closed forms on small layouts, and what the tuning built on it chooses
// (algo/plan_tuning.h): cut-offs that follow the link's latency and the
// ranks, chunks within bounds, explicit settings that win.
#include <gtest/gtest.h>

#include <string>

#include "algo/plan_choice.h"
#include "algo/plan_cost.h"
#include "algo/plan_tuning.h"
#include "algo/tuned_plans.h"
#include "util/error.h"

namespace hetccl {
namespace {

constexpr size_t kK = size_t{1} << 10;
constexpr size_t kM = size_t{1} << 20;
constexpr double kUs = 1e-3;  // the memory term of a rate of 1e9 GB/s
constexpr OpKind kPriced[] = {OpKind::AllReduce, OpKind::AllGather,
                              OpKind::ReduceScatter, OpKind::Broadcast,
                              OpKind::Reduce};

// `sizes` ranks per domain on the host collectives' defaults, run by the
// GPU engine (whose chunks the model chooses); no engine step unless
// given.
CostLayout layoutOf(std::vector<int> sizes, double stepUs = 0,
                    double memoryGbps = 1e9) {
  CostLayout layout;
  layout.domainSizes = std::move(sizes);
  layout.libraries.assign(layout.domainSizes.size(), {5, 10});
  layout.runtimes.assign(layout.domainSizes.size(), RuntimeKind::Cuda);
  layout.memoryGbps = memoryGbps;
  layout.stepUs = stepUs;
  layout.gpuEngine = true;
  return layout;
}

// Two domains of one rank: no library step, so an all-reduce is its
// transfers alone. One-shot: one latency and the buffer; pipelined: two
// hops a chunk (partial out, result back), each carrying the half that the
// other domain reduces, chunk after chunk.
TEST(PlanCost, TwoRanksAllReduceIsItsTransfers) {
  const PlanCostModel model(layoutOf({1, 1}), {10, 1});  // 1 GB/s: 1 us/KB
  EXPECT_NEAR(model.oneShotUs(OpKind::AllReduce, 1000 * 1000), 10 + 1000, kUs);
  EXPECT_NEAR(model.pipelinedUs(OpKind::AllReduce, 1000 * 1000, 16 * kM),
              2 * 10 + 1000, kUs);
  EXPECT_NEAR(model.pipelinedUs(OpKind::AllReduce, 1000 * 1000, 250000),
              4 * (2 * 10 + 250), kUs);
}

// A one-shot all-reduce on domains of 1 and 4 ranks: the lone rank sends
// its buffer to all 4 (each takes it from one member of its domain), the
// library step of the larger domain counts too.
TEST(PlanCost, OneShotPaysForTheLargerDomainsRanks) {
  const PlanCostModel model(layoutOf({1, 4}), {0, 1});
  const double bytes = 1000 * 1000;
  const double library = 5 + 2 * 0.75 * bytes / 10e3;
  EXPECT_NEAR(model.oneShotUs(OpKind::AllReduce, 1000 * 1000),
              std::max(4 * bytes / 1e3, library + bytes / 1e3), kUs);
}

// A transfer-bound broadcast: every hop across pays the step.
TEST(PlanCost, AnEngineStepIsPaidPerHop) {
  const PlanCostModel without(layoutOf({2, 2}), {5, 1});
  const PlanCostModel with(layoutOf({2, 2}, 100), {5, 1});
  EXPECT_NEAR(with.oneShotUs(OpKind::Broadcast, 4096),
              without.oneShotUs(OpKind::Broadcast, 4096) + 100, kUs);
  EXPECT_NEAR(with.pipelinedUs(OpKind::Broadcast, 4 * kM, kM),
              without.pipelinedUs(OpKind::Broadcast, 4 * kM, kM) + 4 * 100,
              kUs);
}

// The lone rank of a one-shot all-reduce on domains of 1 and 4 ranks sends
// its buffer to all 4 at once: 3 more transfers than one, each at the
// link's cost per further transfer.
TEST(PlanCost, EachFurtherTransferCostsItsSender) {
  const PlanCostModel model(layoutOf({1, 4}), {0, 1, 2});
  EXPECT_NEAR(model.oneShotUs(OpKind::AllReduce, 1000 * 1000), 4 * 1000 + 3 * 2,
              kUs);
}

TEST(PlanCost, AnIncompleteLayoutIsAnInternalError) {
  EXPECT_THROW(PlanCostModel(layoutOf({4}), LinkCost{1, 1}), Error);
  EXPECT_THROW(PlanCostModel(layoutOf({1, 1}), LinkCost{1, 0}), Error);
}

// The cut-off is where one-shot stops being faster: it moves up with the
// link's latency (the one-shot plan saves latencies) and, where the domains'
// libraries are fast, down as domains grow (it moves more bytes per rank
// across, the pipelined plan spreads them over the ranks).
TEST(PlanTuning, TheCutOffFollowsLatencyAndRanks) {
  for (OpKind kind : kPriced) {
    const auto cutOff = [&](std::vector<int> sizes, double alphaUs) {
      CostLayout layout = layoutOf(std::move(sizes), 20, 2000);
      layout.libraries.assign(2, defaultLibraryCost(RuntimeKind::Cuda));
      return PlanTuning::fromModel(PlanCostModel(layout, {alphaUs, 10}),
                                   16 * kM, 32 * kK, false, false)
          .oneShotMax(kind);
    };
    EXPECT_LE(cutOff({4, 4}, 2), cutOff({4, 4}, 200)) << opKindName(kind);
    EXPECT_LE(cutOff({8, 8}, 20), cutOff({2, 2}, 20)) << opKindName(kind);
    // Never beyond a chunk, nor beyond 512K but for the all-reduce.
    EXPECT_LE(cutOff({1, 1}, 1000),
              kind == OpKind::AllReduce ? 16 * kM : 512 * kK)
        << opKindName(kind);
  }
  // At 2 ranks a side and 20 us a transfer, a 1 KB all-reduce is one
  // latency in one shot against four pipelined: one-shot wins.
  const PlanTuning tuning =
      PlanTuning::fromModel(PlanCostModel(layoutOf({2, 2}, 20, 10), {20, 10}),
                            16 * kM, 32 * kK, false, false);
  EXPECT_GE(tuning.oneShotMax(OpKind::AllReduce), kK);
  EXPECT_GE(tuning.oneShotMax(OpKind::Reduce), kK);
  EXPECT_EQ(tuning.oneShotMax(OpKind::AlltoAll), 0u);
}

// A one-shot all-gather sends its block to every rank outside its domain:
// where each further transfer costs its sender 1 us, domains of 2 ranks
// keep their cut-off, and domains of 64 and 512 get a lower one than on a
// link without that cost.
TEST(PlanTuning, FurtherTransfersKeepTheOneShotAllGatherToSmallDomains) {
  const auto cutOff = [](int ranks, double transferUs) {
    CostLayout layout = layoutOf({ranks, ranks}, 150, 2000);
    layout.libraries.assign(2, defaultLibraryCost(RuntimeKind::Cuda));
    return PlanTuning::fromModel(PlanCostModel(layout, {2, 50, transferUs}),
                                 16 * kM, 32 * kK, false, false)
        .oneShotMax(OpKind::AllGather);
  };
  EXPECT_EQ(cutOff(2, 1), cutOff(2, 0));
  EXPECT_LT(cutOff(64, 1), cutOff(2, 1));
  EXPECT_LT(cutOff(512, 1), cutOff(512, 0));
}

// Chunks grow with the size, stay between a link's smallest piece and
// HETCCL_CHUNK, and a larger step per chunk makes them no smaller. Domain
// steps and transfers of like length: chunks pay.
TEST(PlanTuning, ChunksGrowWithSizeWithinBounds) {
  const auto tuningOf = [](double stepUs) {
    return PlanTuning::fromModel(
        PlanCostModel(layoutOf({4, 4}, stepUs, 10), {20, 2}), 16 * kM, 32 * kK,
        false, false);
  };
  const PlanTuning light = tuningOf(20);
  const PlanTuning heavy = tuningOf(500);
  for (OpKind kind : kPriced) {
    size_t previous = 0;
    for (size_t bytes = kM; bytes <= (size_t{1} << 30); bytes *= 2) {
      const size_t chunk = light.chunkFor(kind, bytes);
      EXPECT_GE(chunk, previous) << opKindName(kind) << " " << bytes;
      EXPECT_GE(chunk, 256 * kK);
      EXPECT_LE(chunk, 16 * kM);
      EXPECT_GE(heavy.chunkFor(kind, bytes), chunk);
      previous = chunk;
    }
  }
  EXPECT_LT(light.chunkFor(OpKind::AllReduce, 16 * kM), 16 * kM);
  EXPECT_EQ(light.chunkFor(OpKind::AlltoAll, 64 * kM), 16 * kM);
}

// The decision log shows a class's first op; a class is (2^(k-1), 2^k], so
// every size of it takes the same chunk.
TEST(PlanTuning, ASizeClassTakesOneChunk) {
  const PlanTuning tuning =
      PlanTuning::fromModel(PlanCostModel(layoutOf({4, 4}, 20, 10), {20, 10}),
                            16 * kM, 32 * kK, false, false);
  for (size_t k = 21; k <= 28; ++k) {
    const size_t top = size_t{1} << k;
    EXPECT_EQ(tuning.chunkFor(OpKind::AllReduce, top / 2 + 1),
              tuning.chunkFor(OpKind::AllReduce, top));
  }
}

// CPU ranks only: the host engine keeps HETCCL_CHUNK for every size; the
// defaults of each runtime come with the layout.
TEST(PlanTuning, TheHostEngineKeepsItsChunk) {
  const CostLayout host = costLayoutOf(std::vector<int>{4, 4},
                                       {RuntimeKind::Host, RuntimeKind::Host});
  EXPECT_FALSE(host.gpuEngine);
  EXPECT_EQ(host.stepUs, kHostEngineStepUs);
  EXPECT_EQ(host.pipelineUs, kHostPipelineUs);
  const PlanTuning tuning = PlanTuning::fromModel(
      PlanCostModel(host, {20, 2}), 16 * kM, 32 * kK, false, false);
  for (size_t bytes = kM; bytes <= (size_t{1} << 30); bytes *= 2)
    EXPECT_EQ(tuning.chunkFor(OpKind::AllReduce, bytes), 16 * kM);
  const CostLayout mixed = costLayoutOf(
      std::vector<int>{4, 4}, {RuntimeKind::Host, RuntimeKind::Cuda}, 3);
  EXPECT_TRUE(mixed.gpuEngine);
  EXPECT_EQ(mixed.stepUs, kGpuEngineStepUs);
  EXPECT_EQ(mixed.memoryGbps, 3);
}

TEST(PlanTuning, ExplicitSettingsWin) {
  const PlanCostModel model(layoutOf({4, 4}, 20, 10), {20, 10});
  const PlanTuning cutOffSet =
      PlanTuning::fromModel(model, 16 * kM, 4 * kK, true, false);
  const PlanTuning chunkSet =
      PlanTuning::fromModel(model, 2 * kM, 32 * kK, false, true);
  for (OpKind kind : kPriced) {
    EXPECT_EQ(cutOffSet.oneShotMax(kind), 4 * kK);
    EXPECT_EQ(cutOffSet.oneShotMaxText(kind), "HETCCL_ONE_SHOT_MAX=4K");
    for (size_t bytes = kK; bytes <= (size_t{1} << 30); bytes *= 4)
      EXPECT_EQ(chunkSet.chunkFor(kind, bytes), 2 * kM);
    EXPECT_EQ(chunkSet.chunkSource(kind), "HETCCL_CHUNK=2M");
  }
  const PlanTuning fixed = PlanTuning::fixed(8 * kK, 4 * kM);
  EXPECT_EQ(fixed.largestOneShotMax(), 8 * kK);
  EXPECT_EQ(fixed.chunkFor(OpKind::AllGather, kM), 4 * kM);
}

// What the plans take and what the decision log says of it.
TEST(PlanTuning, PlansTakeAndNameTheModelsChoice) {
  PlanContext ctx;
  ctx.nranks = 8;
  ctx.chunkBytes = 16 * kM;
  ctx.oneShotMaxBytes = 32 * kK;
  auto tuning = std::make_shared<PlanTuning>(
      PlanTuning::fromModel(PlanCostModel(layoutOf({4, 4}, 20, 10), {20, 10}),
                            16 * kM, 32 * kK, false, false));
  ctx.tuning = tuning;
  Op op;
  op.kind = OpKind::AllReduce;
  op.dtype = ncclFloat32;
  op.count = tuning->oneShotMax(OpKind::AllReduce) / 4;
  const PlanChoice small = choosePlan(ctx, op);
  EXPECT_EQ(small.plan, PlanChoice::Plan::OneShot);
  EXPECT_NE(describePlan(ctx, small).find("(cost model)"), std::string::npos)
      << describePlan(ctx, small);
  op.count = 64 * kM / 4;
  const PlanChoice large = choosePlan(ctx, op);
  EXPECT_EQ(large.plan, PlanChoice::Plan::Pipelined);
  EXPECT_EQ(large.chunkElements * 4,
            tuning->chunkFor(OpKind::AllReduce, 64 * kM));
  EXPECT_NE(
      describePlan(ctx, large).find("cost model, at most HETCCL_CHUNK=16M"),
      std::string::npos)
      << describePlan(ctx, large);
  const std::string summary = tuning->summary();
  for (const char* kind : {"all-reduce: one-shot up to", "all-gather:",
                           "reduce-scatter:", "broadcast:", "reduce:"})
    EXPECT_NE(summary.find(kind), std::string::npos) << summary;
}

// Plans tuned at init from a measured model of `layout` and `link`, with
// 16M chunks and HETCCL_ONE_SHOT_MAX at 32K, as a communicator's init
// leaves them for the engines to tune again.
PlanSettings measuredPlans(const CostLayout& layout, const LinkCost& link) {
  PlanSettings plans{};
  plans.chunkBytes = 16 * kM;
  plans.oneShotMaxBytes = 32 * kK;
  plans.measuredInputs = std::make_shared<PlanSettings::TuningInputs>(
      PlanSettings::TuningInputs{PlanCostModel(layout, link), 32 * kK});
  return plans;
}

// An engine's step fitted to a one-element all-reduce it timed: what the
// all-reduce took beyond the model's price without a step (never below
// 0); tuned again with it, the plans choose as a model built with that
// step does, with the tie-breaking HETCCL_ONE_SHOT_MAX of the first tuning.
TEST(PlanTuning, TheEngineStepIsFittedToATimedAllReduce) {
  const LinkCost link{10, 10};
  PlanSettings plans = measuredPlans(layoutOf({1, 1}, 150, 2000), link);
  const double stepless = PlanCostModel(layoutOf({1, 1}, 0, 2000), link)
                              .oneShotUs(OpKind::AllReduce, sizeof(float));
  EXPECT_NEAR(fittedEngineStepUs(plans, stepless + 40), 40, kUs);
  EXPECT_EQ(fittedEngineStepUs(plans, stepless / 2), 0);

  plans.oneShotMaxBytes = 4 * kM;  // the first tuning's largest cut-off
  const PlanSettings again =
      retuneWithEngineStep(plans, 40, stepless + 40, /*rank=*/1);
  const PlanTuning expected =
      PlanTuning::fromModel(PlanCostModel(layoutOf({1, 1}, 40, 2000), link),
                            16 * kM, 32 * kK, false, false);
  for (OpKind kind : kPriced) {
    EXPECT_EQ(again.tuning->oneShotMax(kind), expected.oneShotMax(kind))
        << opKindName(kind);
    for (size_t bytes = kK; bytes <= 256 * kM; bytes *= 4)
      EXPECT_EQ(again.tuning->chunkFor(kind, bytes),
                expected.chunkFor(kind, bytes))
          << opKindName(kind) << " " << bytes;
  }
  EXPECT_EQ(again.oneShotMaxBytes, expected.largestOneShotMax());
  EXPECT_EQ(again.measuredInputs->oneShotMaxBytes, 32 * kK);
  EXPECT_EQ(again.measuredInputs->model.layout().stepUs, 40);

  // Explicit settings still win.
  plans.chunkSet = true;
  const PlanSettings chunked = retuneWithEngineStep(plans, 40, 0, 1);
  EXPECT_EQ(chunked.tuning->chunkFor(OpKind::AllReduce, 256 * kM), 16 * kM);
}

// Libraries timed at init (the host engine's domain collectives) replace
// the model's figures for their domains only, keeping the link and the
// first tuning's HETCCL_ONE_SHOT_MAX; a slower library then moves the
// plans where the domain steps weigh (here the one-shot all-reduce's
// cut-off). With none timed the plans stay as they were.
TEST(PlanTuning, TimedLibrariesReplaceTheirDomainsFigures) {
  const LinkCost link{10, 10};
  const PlanSettings plans = measuredPlans(layoutOf({2, 2}, 20, 10), link);
  EXPECT_EQ(
      withTimedLibraries(plans, {std::nullopt, std::nullopt}, 1).measuredInputs,
      plans.measuredInputs);
  const LibraryCost slow{40, 1};
  const PlanSettings priced =
      withTimedLibraries(plans, {std::nullopt, slow}, /*rank=*/1);
  const CostLayout& layout = priced.measuredInputs->model.layout();
  EXPECT_EQ(layout.libraries[0].alphaUs, 5);
  EXPECT_EQ(layout.libraries[0].busGbps, 10);
  EXPECT_EQ(layout.libraries[1].alphaUs, 40);
  EXPECT_EQ(layout.libraries[1].busGbps, 1);
  EXPECT_EQ(priced.measuredInputs->model.link().alphaUs, 10);
  EXPECT_EQ(priced.measuredInputs->oneShotMaxBytes, 32 * kK);
  const auto cutOff = [](const PlanSettings& p) {
    return retuneWithEngineStep(p, 20, 0, 1)
        .tuning->oneShotMax(OpKind::AllReduce);
  };
  EXPECT_NE(cutOff(priced), cutOff(plans));
}

// What a measured step changes. On the link the H200 machine's pretend
// hosts measured at init (16.1 us, 8.66 GB/s) two lone GPU ranks choose
// alike for any step from 60 us to 235 us (an eager 8 KB all-reduce took
// 255 us there): the constant 150 chose as well as a measured step would.
// On a fast link between domains of 8 GPUs a step of 30 us instead of 150
// ends the one-shot all-reduce at a quarter of the size.
TEST(PlanTuning, AMeasuredStepMovesTheCutOffsWhereTheStepMatters) {
  const auto tuningFor = [](std::vector<int> sizes, LinkCost link,
                            double stepUs) {
    CostLayout layout = costLayoutOf(
        sizes, std::vector<RuntimeKind>(sizes.size(), RuntimeKind::Cuda));
    layout.stepUs = stepUs;
    return PlanTuning::fromModel(PlanCostModel(layout, link), 16 * kM, 32 * kK,
                                 false, false);
  };
  const LinkCost pretendHosts{16.1, 8.66, 1};
  for (double stepUs : {60.0, 235.0})
    EXPECT_EQ(tuningFor({1, 1}, pretendHosts, stepUs).summary(),
              tuningFor({1, 1}, pretendHosts, kGpuEngineStepUs).summary())
        << stepUs;
  const LinkCost fast{5, 50, 1};
  EXPECT_EQ(tuningFor({8, 8}, fast, 150).oneShotMax(OpKind::AllReduce), 8 * kM);
  EXPECT_EQ(tuningFor({8, 8}, fast, 30).oneShotMax(OpKind::AllReduce), 2 * kM);
}

}  // namespace
}  // namespace hetccl
