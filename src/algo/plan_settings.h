// The heterogeneous plans' settings, read from their parameters
// (plan_params.def) when a communicator is created; the engines that run
// the plans put them in the PlanContext.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>

#include "algo/plan_cost.h"
#include "algo/plan_tuning.h"
#include "util/params.h"

namespace hetccl {

#define HETCCL_PARAMS_FILE "algo/plan_params.def"
#define HETCCL_PARAMS_LIST planParams
#include "util/declare_params.inc"

struct PlanSettings {
  size_t chunkBytes;       // HETCCL_CHUNK: a pipeline step
  size_t oneShotMaxBytes;  // HETCCL_ONE_SHOT_MAX: the one-shot plans' limit
  int hostThreads;         // HETCCL_HOST_THREADS: 0 for the cores' choice
  bool timeline;           // HETCCL_ENGINE_TIMELINE
  // Set explicitly: the cost model leaves them as they are.
  bool chunkSet = false;
  bool oneShotMaxSet = false;
  // HETCCL_LINK_COST; none: measured at init (algo/link_probe.h).
  std::optional<LinkCost> declaredLink;
  // HETCCL_ENGINE_STEP (us); none: timed at init (engine/engine_step.h).
  std::optional<double> declaredStepUs;
  // The cost model's choice, made once the links are up (null until then,
  // and where nothing is left to choose).
  std::shared_ptr<const PlanTuning> tuning;
  // What the tuning came from where the link was measured and the step
  // was not declared (null otherwise): an engine that times its own hop across
  // at init tunes again from it with the step it measured (algo/tuned_plans.h).
  struct TuningInputs {
    PlanCostModel model;
    size_t oneShotMaxBytes;  // HETCCL_ONE_SHOT_MAX's value, set or not
  };
  std::shared_ptr<const TuningInputs> measuredInputs;

  // Throws ncclInvalidArgument for the first bad value.
  static PlanSettings fromEnvironment();
};

}  // namespace hetccl
