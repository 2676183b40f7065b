// The runtime layer's parameters (runtime_params.def): whether a process
// is a CPU rank, a GPU rank, or a GPU rank on an emulated GPU, read where
// the current device is asked for (gpu_device.cc, loaded_runtime.cc); and
// where each GPU runtime's device module is (its row in gpu_runtimes.cc);
// and how many threads share a CPU rank's copies and reductions
// (memory_workers.h).
#pragma once

#include "util/params.h"

namespace hetccl {

#define HETCCL_PARAMS_FILE "runtime/runtime_params.def"
#define HETCCL_PARAMS_LIST runtimeParams
#include "util/declare_params.inc"

}  // namespace hetccl
