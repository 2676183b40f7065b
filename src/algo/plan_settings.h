// The heterogeneous plans' settings, read from their parameters
// (plan_params.def) when a communicator is created; the engines that run
// the plans put them in the PlanContext.
#pragma once

#include <cstddef>

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

  // Throws ncclInvalidArgument for the first bad value.
  static PlanSettings fromEnvironment();
};

}  // namespace hetccl
