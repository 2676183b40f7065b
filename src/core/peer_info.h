// What every rank tells the others at init.
#pragma once

#include <cstdint>
#include <optional>

#include "runtime/gpu_device.h"
#include "util/settings.h"

namespace hetccl {

struct PeerInfo {
  uint64_t hostId;  // same value <=> same host (and network namespace)
  int32_t pid;
  int32_t runtime;      // RuntimeKind
  int32_t device;       // device ordinal; -1 for CPU ranks
  int32_t domainLabel;  // from HETCCL_DOMAINS (see domains.h)
  char hostname[64];

  // This process as `rank` of `nranks`, its host id and domain label taken
  // from `settings` (HETCCL_HOSTID, HETCCL_DOMAINS; throws
  // ncclInvalidArgument if the domains are malformed) unless
  // `inheritedLabel` gives the label (communicators split from a parent
  // keep the parent's domains).
  // `gpu`: the rank's GPU, if it is a GPU rank.
  static PeerInfo local(int rank, int nranks, std::optional<GpuDevice> gpu,
                        const Settings& settings,
                        std::optional<int> inheritedLabel = std::nullopt);
};

}  // namespace hetccl
