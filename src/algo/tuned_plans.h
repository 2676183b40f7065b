// A communicator's plans across domains, tuned when it is created: the
// link between its domains measured (or HETCCL_LINK_COST), the cost model
// (algo/plan_cost.h) asked for each collective's one-shot cut-off and
// chunks, and the choice logged (INFO TUNING) by rank 0. Where
// HETCCL_ONE_SHOT_MAX and HETCCL_CHUNK are both set nothing is left to
// choose, and nothing is measured. Where the link was measured, every
// rank's engine then times its own hop across, and the host engine its
// domain's library, and the plans are tuned again with what they found
// (withTimedLibraries, fittedEngineStepUs, retuneWithEngineStep;
// engine/engine_step.h).
#pragma once

#include <optional>
#include <vector>

#include "algo/cross_domain_links.h"
#include "algo/plan_settings.h"
#include "util/abort_signal.h"
#include "util/oob.h"

namespace hetccl {

// Collective over `oob` (the whole communicator). The settings with their
// tuning, and the one-shot limit the engines size scratch for.
PlanSettings tunePlans(const PlanSettings& plans, Oob& oob,
                       const DomainMap& domains,
                       const std::vector<RankPlacement>& placements,
                       CrossDomainLinks& links, const AbortSignal& abort,
                       double timeoutSeconds);

// `plans` whose measured model (`plans.measuredInputs`) prices domain d's
// library at `libraries[d]` where it is set (timed at init); rank 0 logs
// each one against the figure it replaces (INFO TUNING). The plans are
// chosen again by retuneWithEngineStep.
PlanSettings withTimedLibraries(
    const PlanSettings& plans,
    const std::vector<std::optional<LibraryCost>>& libraries, int rank);

// The engine's step across domains with which the model of
// `plans.measuredInputs` prices a one-shot all-reduce of one float at
// `allReduceUs`, the slowest rank's time for one on its engine (one hop:
// the link's latency, the step, next to nothing else); at least 0.
double fittedEngineStepUs(const PlanSettings& plans, double allReduceUs);

// `plans` tuned again from `plans.measuredInputs` with the engine's step
// at `stepUs`, by the same rules (explicit settings win); rank 0 logs the
// new choice (INFO TUNING) with the all-reduce it came from.
PlanSettings retuneWithEngineStep(const PlanSettings& plans, double stepUs,
                                  double allReduceUs, int rank);

}  // namespace hetccl
