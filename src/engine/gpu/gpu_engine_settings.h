// The GPU engine's settings, read from its parameters
// (gpu_engine_params.def) when a communicator is created: whether GPU
// ranks of one host take the stream-driven path and how it cuts and sends
// data (hostshm/), and what the plan executor and its proxy record
// (plan/, proxy/).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "util/params.h"

namespace hetccl {

#define HETCCL_PARAMS_FILE "engine/gpu/gpu_engine_params.def"
#define HETCCL_PARAMS_LIST gpuEngineParams
#include "util/declare_params.inc"

struct GpuEngineSettings {
  bool direct;                      // HETCCL_GPU_DIRECT
  size_t chunkBytes;                // HETCCL_GPU_CHUNK
  size_t lowLatencyMaxBytes;        // HETCCL_GPU_LL_MAX
  size_t stagedLowLatencyMaxBytes;  // HETCCL_STAGED_LL_MAX
  size_t stagedCopyPieces;          // HETCCL_STAGED_COPY_PIECES
  uint64_t stagedRunsFrom;          // HETCCL_STAGED_RUNS_FROM
  size_t stagingStreams;            // HETCCL_STAGING_STREAMS (pairs)
  bool stallSteps;                  // HETCCL_STALL_STEPS
  std::string proxyTrace;           // HETCCL_PROXY_TRACE (empty: none)

  // Throws ncclInvalidArgument for the first bad value.
  static GpuEngineSettings fromEnvironment();
};

}  // namespace hetccl
