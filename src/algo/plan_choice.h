// Which plan a collective across domains takes, and why: the one place
// that decides it (the plans ask here) and that the decision log
// (op/decision_log.h) describes, so the two cannot drift apart.
#pragma once

#include <cstddef>
#include <string>

#include "algo/plan_context.h"

namespace hetccl {

struct PlanChoice {
  enum class Plan {
    OneShot,    // one exchange across domains
    Pipelined,  // chunk by chunk, one chunk's exchange in flight
    Direct,     // every block straight to its rank (all-to-all, ...)
  };
  Plan plan = Plan::Pipelined;
  OpKind kind = OpKind::AllReduce;  // the collective's
  // What HETCCL_ONE_SHOT_MAX is compared with ("buffer", "output",
  // "input"); null for direct transfers.
  const char* measured = nullptr;
  size_t measuredBytes = 0;
  // Pipelined: elements of each row per chunk, and the largest chunk's
  // bytes over all rows (several for the plans that cut every rank's
  // block).
  size_t chunkElements = 0;
  size_t chunkBytes = 0;
  size_t chunks = 0;
};

// The plan of `op` (a collective) on `ctx`.
PlanChoice choosePlan(const PlanContext& ctx, const Op& op);

// "one-shot plan: output 256 bytes <= HETCCL_ONE_SHOT_MAX=32K", for the
// decision log.
std::string describePlan(const PlanContext& ctx, const PlanChoice& choice);

}  // namespace hetccl
