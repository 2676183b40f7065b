// Tunables of the net transport, read from its parameters (net_params.def)
// when a communicator is created; HETCCL_NET_PLUGIN and HETCCL_NET_MODULE
// are read where the plugin loads (net_library.cc).
#pragma once

#include <cstddef>
#include <string>

#include "transport/gpu_buffers.h"
#include "util/params.h"

namespace hetccl {

#define HETCCL_PARAMS_FILE "transport/net/net_params.def"
#define HETCCL_PARAMS_LIST netParams
#include "util/declare_params.inc"

// The largest message of a cut transfer by default (HETCCL_NET_PART), and
// its bounds.
constexpr size_t kNetPartBytes = size_t{1} << 20;
constexpr size_t kMinNetPartBytes = 4096;
constexpr size_t kMaxNetPartBytes = size_t{1} << 30;
// The smallest share where the rank has fewer than kManyCores cores
// (HETCCL_NET_SPLIT=0; smallestPartForCores).
constexpr size_t kNetFewCoresSplitBytes = 256 * 1024;

struct NetSettings {
  size_t partBytes = kNetPartBytes;    // HETCCL_NET_PART
  std::string devices = "auto";        // HETCCL_NET_DEVICES
  GpuBuffers gpu = GpuBuffers::kAuto;  // HETCCL_NET_GPU
  size_t splitBytes = 0;               // HETCCL_NET_SPLIT; 0: by cores

  // Throws ncclInvalidArgument for a bad value (HETCCL_NET_DEVICES is
  // checked against the plugin's devices where they are chosen).
  static NetSettings fromEnvironment();
};

}  // namespace hetccl
