// Tunables of the ucx transport, read from its parameters (ucx_params.def)
// when a communicator is created; HETCCL_UCX_MODULE is read where UCX
// loads (ucx_library.cc).
#pragma once

#include <cstddef>

#include "transport/gpu_buffers.h"
#include "util/params.h"

namespace hetccl {

#define HETCCL_PARAMS_FILE "transport/ucx/ucx_params.def"
#define HETCCL_PARAMS_LIST ucxParams
#include "util/declare_params.inc"

// The largest part of a cut transfer by default (HETCCL_UCX_PART), and its
// bounds. Over UCX's tcp on 2 cores one lane moved 64 and 256 MiB
// transfers 1.5x to 1.9x faster as 1 MiB messages than whole, level with
// ucx_perftest (bench/results/ucx-lanes-parts-2026-12-01.md).
constexpr size_t kUcxPartBytes = size_t{1} << 20;
constexpr size_t kMinUcxPartBytes = size_t{64} << 10;
constexpr size_t kMaxUcxPartBytes = size_t{1} << 30;
// The smallest part where the rank has fewer than kManyCores cores
// (HETCCL_UCX_SPLIT=0; smallestPartForCores).
constexpr size_t kUcxFewCoresSplitBytes = 256 * 1024;

struct UcxSettings {
  int lanes = 0;                       // HETCCL_UCX_LANES; 0: by cores
  size_t partBytes = kUcxPartBytes;    // HETCCL_UCX_PART
  GpuBuffers gpu = GpuBuffers::kAuto;  // HETCCL_UCX_GPU
  size_t splitBytes = 0;               // HETCCL_UCX_SPLIT; 0: by cores

  // Throws ncclInvalidArgument for the first bad value.
  static UcxSettings fromEnvironment();
};

}  // namespace hetccl
