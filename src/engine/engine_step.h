// The engine's step across domains, measured at init. The cost model's
// step (algo/plan_cost.h: the hand-overs between a GPU engine's streams
// and its proxy, a CPU rank's plan thread) was a constant, measured on
// one layout; where the link was measured, every rank's engine (the host
// engine's and the GPU engine's alike, so that a communicator of CPU and
// GPU ranks runs the same launches everywhere) times its own hop across,
// the step is fitted to the slowest rank's time and the plans are chosen
// again with it (algo/tuned_plans.h).
#pragma once

#include <functional>
#include <optional>

#include "algo/domains.h"
#include "algo/plan_settings.h"
#include "op/op.h"
#include "util/oob.h"

namespace hetccl {

// An executor of the plans across domains whose hop can be timed and
// whose plans can be chosen again.
class StepTimedEngine {
 public:
  virtual ~StepTimedEngine() = default;
  // The fastest of `rounds` all-reduces of one float across the domains,
  // in microseconds, each run as a user's small collective would be and
  // waited for. Collective: every rank calls it at init, before any
  // user's launch; its bytes are not counted and its choices not logged.
  // Throws when one fails or takes longer than `timeoutSeconds` (0: no
  // limit).
  virtual double timeOneElementAllReduceUs(int rounds,
                                           double timeoutSeconds) = 0;
  // Its domain's library as this rank times it: the cost of one
  // all-reduce (of one float) and the bus bandwidth of a larger one, the
  // fastest of `rounds` each. Collective over the domain, at init, before
  // the hop is timed; its collectives wait as long as they always do. Nothing
  // where it does not time one: a domain of one rank, and the vendor libraries,
  // whose first calls set up their connections and which keep the public
  // figures.
  virtual std::optional<LibraryCost> timeDomainLibrary(int rounds) {
    (void)rounds;
    return std::nullopt;
  }
  // The plans take `plans`' tuning from the next launch on.
  virtual void retune(const PlanSettings& plans) = 0;
};

// What an engine times: an all-reduce of one float, in place in `buffer`.
Op oneElementAllReduce(void* buffer);

// The fastest of `rounds` calls of `run`, in microseconds.
double fastestRunUs(int rounds, const std::function<void()>& run);

// Whether `plans` call for it: the link was measured, the step not
// declared (HETCCL_ENGINE_STEP) and one float's all-reduce goes one-shot
// (one hop). The same answer on every rank.
bool timesItsStep(const PlanSettings& plans);

// Collective over `oob`: times `engine`'s domain library (where it does)
// and its hop, agrees on success (every rank's init fails saying why
// otherwise), prices each domain's library as its slowest rank timed it,
// fits the step to the slowest rank's hop and retunes `engine`; rank 0
// logs the choices (INFO TUNING).
void tuneToMeasuredStep(StepTimedEngine& engine, const PlanSettings& plans,
                        const DomainMap& domains, Oob& oob,
                        double timeoutSeconds);

}  // namespace hetccl
