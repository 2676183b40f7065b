// The shm transport's settings: each sender's ring geometry.
#pragma once

#include <cstddef>

#include "util/params.h"

namespace hetccl {

#define HETCCL_PARAMS_FILE "transport/shm/shm_link_params.def"
#define HETCCL_PARAMS_LIST shmLinkParams
#include "util/declare_params.inc"

// Tunables of one sender's rings, read from the shm transport's parameters
// (shm_link_params.def) when a communicator is created.
struct ShmLinkSettings {
  // HETCCL_SHM_LINK_SLOTS: slots per ring (1..1024).
  size_t slots = 8;
  // HETCCL_SHM_LINK_CHUNK: bytes per slot (4 KiB..1 GiB, rounded up to 64).
  // Small slots keep a ring in the cores' caches: 128 KiB x 8 measured
  // best for 4 ranks in 2 domains on the 2-core development machine.
  size_t chunkBytes = size_t{128} << 10;
  // HETCCL_SHM_LINK_THREAD: whether a thread moves the transfers in the
  // background (usesProgressThread).
  enum class ProgressThread { kAuto, kNever, kAlways };
  ProgressThread progressThread = ProgressThread::kAuto;

  // Rounds the slot size up to 64 bytes; the bounds are
  // shm_link_params.def's. Throws ncclInvalidArgument for a bad value.
  static ShmLinkSettings fromEnvironment();
  // Under kAuto: where `cores` (the process may use) are at least twice
  // `hostRanks`, so the thread takes no rank's core.
  bool usesProgressThread(int cores, int hostRanks) const;
};

}  // namespace hetccl
