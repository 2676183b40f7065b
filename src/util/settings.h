// The parameters that shape one communicator, read from the environment
// once when it is created (a bad value fails that init) and passed down to
// the layers that use them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "util/params.h"

namespace hetccl {

// What the ucx transport does with GPU buffers (HETCCL_UCX_GPU).
enum class UcxGpuBuffers { kStaged, kAuto, kRequired };

// A parameter's value as readCanonical gives it.
struct SettingValue {
  Param param;
  std::string value;
};

struct Settings {
  double bootstrapTimeoutSeconds;     // HETCCL_BOOTSTRAP_TIMEOUT; 0: forever
  double timeoutSeconds;              // HETCCL_TIMEOUT; 0: forever
  std::string transport;              // HETCCL_TRANSPORT; empty: auto
  std::optional<std::string> hostId;  // HETCCL_HOSTID
  std::string domains;                // HETCCL_DOMAINS; empty: by runtime
  size_t chunkBytes;                  // HETCCL_CHUNK
  size_t oneShotMaxBytes;             // HETCCL_ONE_SHOT_MAX
  size_t shmChunkBytes;               // HETCCL_SHM_CHUNK
  size_t shmP2pChunkBytes;            // HETCCL_SHM_P2P_CHUNK
  size_t shmDirectReduceMax;          // HETCCL_SHM_DIRECT_REDUCE_MAX
  size_t shmLinkSlots;                // HETCCL_SHM_LINK_SLOTS
  size_t shmLinkChunkBytes;           // HETCCL_SHM_LINK_CHUNK
  int tcpSocketsPerLink;              // HETCCL_TCP_SOCKETS
  int tcpThreads;                     // HETCCL_TCP_THREADS
  int tcpPollMicroseconds;            // HETCCL_TCP_POLL_US
  size_t tcpStripeBytes;              // HETCCL_TCP_CHUNK
  int tcpSocketBufferBytes;           // HETCCL_TCP_BUFFER; 0: autotuning
  int ucxLanes;                       // HETCCL_UCX_LANES; 0: by cores
  size_t ucxPartBytes;                // HETCCL_UCX_PART
  UcxGpuBuffers ucxGpu;               // HETCCL_UCX_GPU
  bool gpuDirect;                     // HETCCL_GPU_DIRECT
  size_t gpuChunkBytes;               // HETCCL_GPU_CHUNK
  size_t gpuLowLatencyMaxBytes;       // HETCCL_GPU_LL_MAX
  bool checkCalls;                    // HETCCL_CHECK_CALLS
  bool engineTimeline;                // HETCCL_ENGINE_TIMELINE
  bool scriptedLaunches;              // HETCCL_SCRIPTED_LAUNCHES
  // Every parameter that must be the same on every rank (ParamScope::Same),
  // in declaration order: init compares them (util/settings_agreement.h).
  std::vector<SettingValue> mustAgree;

  // Throws an Error (ncclInvalidArgument) for the first bad value.
  static Settings fromEnvironment();
};

}  // namespace hetccl
