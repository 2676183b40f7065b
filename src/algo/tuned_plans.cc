#include "algo/tuned_plans.h"

#include <algorithm>
#include <chrono>

#include "algo/link_probe.h"
#include "runtime/host/host_reduce.h"
#include "util/error.h"
#include "util/log.h"

namespace hetccl {
namespace {

// How fast this machine combines two buffers of floats, in GB/s of one
// input: the model's rate for a CPU rank's reductions. A few milliseconds.
// The 4 MB buffers are past most L2 caches; a large L3 holds them, and
// there the rate comes out above what a large collective sees.
double hostReduceGbps() {
  constexpr size_t kCount = size_t{1} << 20;
  constexpr int kRounds = 3;
  std::vector<float> a(kCount, 1.0f), b(kCount, 2.0f);
  const void* sources[] = {a.data(), b.data()};
  double fastestUs = 1e30;
  for (int i = 0; i < kRounds; ++i) {
    const auto start = std::chrono::steady_clock::now();
    hostReduce(a.data(), sources, 2, kCount, Reduction{});
    fastestUs =
        std::min(fastestUs, std::chrono::duration<double, std::micro>(
                                std::chrono::steady_clock::now() - start)
                                .count());
  }
  return kCount * sizeof(float) / (std::max(fastestUs, 1e-3) * 1e3);
}

// The slowest CPU rank's rate (0 with none), the same on every rank.
double slowestHostReduceGbps(Oob& oob,
                             const std::vector<RankPlacement>& placements) {
  std::vector<double> rates(oob.nranks(), 0);
  if (placements[oob.rank()].runtime == static_cast<int>(RuntimeKind::Host))
    rates[oob.rank()] = hostReduceGbps();
  oob.allGather(rates.data(), sizeof(double));
  double slowest = 0;
  for (double rate : rates)
    if (rate > 0) slowest = slowest == 0 ? rate : std::min(slowest, rate);
  return slowest;
}

// `plans` with `model`'s choices, where its parameters leave any.
PlanSettings tunedBy(const PlanCostModel& model, const PlanSettings& plans) {
  PlanSettings tuned = plans;
  auto tuning = std::make_shared<PlanTuning>(
      PlanTuning::fromModel(model, plans.chunkBytes, plans.oneShotMaxBytes,
                            plans.oneShotMaxSet, plans.chunkSet));
  tuned.oneShotMaxBytes = tuning->largestOneShotMax();
  tuned.tuning = std::move(tuning);
  return tuned;
}

}  // namespace

PlanSettings tunePlans(const PlanSettings& plans, Oob& oob,
                       const DomainMap& domains,
                       const std::vector<RankPlacement>& placements,
                       CrossDomainLinks& links, const AbortSignal& abort,
                       double timeoutSeconds) {
  if (plans.chunkSet && plans.oneShotMaxSet) return plans;
  const LinkCost link =
      plans.declaredLink
          ? *plans.declaredLink
          : measureLinkCost(oob, domains, links, abort, timeoutSeconds);
  links.startCounting();
  const double hostGbps = slowestHostReduceGbps(oob, placements);
  CostLayout layout = costLayoutOf(domains, placements, hostGbps);
  if (plans.declaredStepUs) layout.stepUs = *plans.declaredStepUs;
  const PlanCostModel model(layout, link);
  PlanSettings tuned = tunedBy(model, plans);
  if (!plans.declaredLink && !plans.declaredStepUs)
    tuned.measuredInputs = std::make_shared<PlanSettings::TuningInputs>(
        PlanSettings::TuningInputs{model, plans.oneShotMaxBytes});
  if (oob.rank() == 0)
    LOG_INFO(kLogTuning,
             "rank 0: cost model: link between domains %.1f us, %.2f GB/s, "
             "%.1f us per further transfer (%s)%s%s; %s",
             link.alphaUs, link.gbps, link.transferUs,
             plans.declaredLink ? "HETCCL_LINK_COST" : "measured",
             hostGbps > 0
                 ? format(", CPU ranks reduce at %.2f GB/s", hostGbps).c_str()
                 : "",
             plans.declaredStepUs
                 ? format(", the engine's step %.1f us (HETCCL_ENGINE_STEP)",
                          *plans.declaredStepUs)
                       .c_str()
                 : "",
             tuned.tuning->summary().c_str());
  return tuned;
}

PlanSettings withTimedLibraries(
    const PlanSettings& plans,
    const std::vector<std::optional<LibraryCost>>& libraries, int rank) {
  if (!plans.measuredInputs)
    fail(ncclInternalError, "no measured cost model to price libraries in");
  CostLayout layout = plans.measuredInputs->model.layout();
  bool timed = false;
  for (size_t d = 0; d < libraries.size() && d < layout.libraries.size(); ++d) {
    if (!libraries[d]) continue;
    if (rank == 0)
      LOG_INFO(kLogTuning,
               "rank 0: cost model: domain %zu's library timed at init: %.1f "
               "us per collective, %.2f GB/s bus bandwidth (instead of %.1f "
               "us, %.2f GB/s)",
               d, libraries[d]->alphaUs, libraries[d]->busGbps,
               layout.libraries[d].alphaUs, layout.libraries[d].busGbps);
    layout.libraries[d] = *libraries[d];
    timed = true;
  }
  if (!timed) return plans;
  PlanSettings priced = plans;
  priced.measuredInputs =
      std::make_shared<PlanSettings::TuningInputs>(PlanSettings::TuningInputs{
          PlanCostModel(layout, plans.measuredInputs->model.link()),
          plans.measuredInputs->oneShotMaxBytes});
  return priced;
}

double fittedEngineStepUs(const PlanSettings& plans, double allReduceUs) {
  if (!plans.measuredInputs)
    fail(ncclInternalError, "no measured cost model to fit a step to");
  CostLayout layout = plans.measuredInputs->model.layout();
  layout.stepUs = 0;
  const PlanCostModel stepless(layout, plans.measuredInputs->model.link());
  return std::max(
      0.0, allReduceUs - stepless.oneShotUs(OpKind::AllReduce, sizeof(float)));
}

PlanSettings retuneWithEngineStep(const PlanSettings& plans, double stepUs,
                                  double allReduceUs, int rank) {
  if (!plans.measuredInputs)
    fail(ncclInternalError, "no measured cost model to tune again");
  const PlanSettings::TuningInputs& inputs = *plans.measuredInputs;
  CostLayout layout = inputs.model.layout();
  layout.stepUs = stepUs;
  const PlanCostModel model(layout, inputs.model.link());
  PlanSettings original = plans;
  original.oneShotMaxBytes = inputs.oneShotMaxBytes;
  PlanSettings tuned = tunedBy(model, original);
  tuned.measuredInputs = std::make_shared<PlanSettings::TuningInputs>(
      PlanSettings::TuningInputs{model, inputs.oneShotMaxBytes});
  if (rank == 0)
    LOG_INFO(kLogTuning,
             "rank 0: cost model: the engine's step across domains %.1f us "
             "(measured at init: a one-element all-reduce across the domains "
             "took %.1f us); %s",
             stepUs, allReduceUs, tuned.tuning->summary().c_str());
  return tuned;
}

}  // namespace hetccl
