// A communicator's plans across domains, tuned when it is created: the
// link between its domains measured (or HETCCL_LINK_COST), the cost model
// (algo/plan_cost.h) asked for each collective's one-shot cut-off and
// chunks, and the choice logged (INFO TUNING) by rank 0. Where
// HETCCL_ONE_SHOT_MAX and HETCCL_CHUNK are both set nothing is left to
// choose, and nothing is measured.
#pragma once

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

}  // namespace hetccl
