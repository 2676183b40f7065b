// The host collectives' settings: their staging buffers and slots.
#pragma once

#include <cstddef>

#include "util/params.h"

namespace hetccl {

#define HETCCL_PARAMS_FILE "domain/host/shm_params.def"
#define HETCCL_PARAMS_LIST shmParams
#include "util/declare_params.inc"

// The host collectives' settings, read from their parameters
// (shm_params.def) when a communicator is created.
struct ShmSettings {
  size_t chunkBytes;       // capacity of each collective staging buffer
  size_t p2pChunkBytes;    // capacity of each point-to-point slot
  size_t directReduceMax;  // below this, every rank reduces whole rounds
  int hostThreads;         // HETCCL_HOST_THREADS: 0 for the cores' choice

  // Rounds the buffers up to 64 bytes; the bounds are shm_params.def's.
  // Throws ncclInvalidArgument for a bad value.
  static ShmSettings fromEnvironment();
};

}  // namespace hetccl
