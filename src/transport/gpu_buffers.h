// What a transport that can move GPU memory itself (ucx, net) does with the
// GPU engine's buffers: one parameter shape for all of them
// (HETCCL_UCX_GPU, HETCCL_NET_GPU: auto, 0, 1).
#pragma once

#include "util/params.h"

namespace hetccl {

enum class GpuBuffers {
  kStaged,    // 0: always through host memory
  kAuto,      // auto: as they are where the transport moves them well
  kRequired,  // 1: as they are, else the init fails
};

// Reads a Choice parameter of accepted values "auto,0,1".
GpuBuffers readGpuBuffers(const ParamSpec& spec);

}  // namespace hetccl
