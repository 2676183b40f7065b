// The link between domains, measured when a communicator is created, for
// the cost model that chooses its plans (algo/plan_cost.h): the first
// rank of domain 0 and the first rank of each other domain time round
// trips of a few bytes (the latency: half the fastest), bursts of small
// transfers posted at once and answered (the cost of each further
// transfer: what the fastest burst took beyond a round trip, shared out)
// and exchanges of a few transfers of megabytes each way at once, as the
// plans load a link, answered by a few bytes (the rate: what the fastest
// took beyond a round trip). The pairs take turns; every rank gets the slowest
// pair's figures, so all ranks feed the model alike. It takes a few
// milliseconds, over the links the plans use, before any plan runs.
#pragma once

#include "algo/cross_domain_links.h"
#include "algo/plan_cost.h"
#include "util/abort_signal.h"
#include "util/oob.h"

namespace hetccl {

// Collective over `oob` (the whole communicator).
LinkCost measureLinkCost(Oob& oob, const DomainMap& domains,
                         const CrossDomainLinks& links,
                         const AbortSignal& abort, double timeoutSeconds);

}  // namespace hetccl
