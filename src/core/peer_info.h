// What every rank tells the others at init.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/settings.h"
#include "runtime/gpu_device.h"

namespace hetccl {

// What ranks exchange after init (plans, link and engine wire formats) is
// versioned by this number: bump it with any change that ranks of an older
// build would misread.
// 4: settings digest; 5: call signatures; 6: GPU outboxes' transfer
// signatures; 7: GPU ids.
constexpr uint32_t kCommProtocolVersion = 7;

// Where a rank sits: what a communicator split from a parent inherits.
struct Placement {
  int32_t domainLabel;
  uint64_t hostId;
};

struct PeerInfo {
  uint64_t hostId;  // same value <=> same host (and network namespace)
  int32_t pid;
  int32_t runtime;      // RuntimeKind
  int32_t device;       // device ordinal; -1 for CPU ranks
  int32_t domainLabel;  // from HETCCL_DOMAINS (see domains.h)
  char hostname[64];
  char release[16];          // HetCCL's release ("0.1.0")
  uint32_t protocolVersion;  // kCommProtocolVersion
  uint64_t settingsDigest;   // mustAgreeDigest (util/settings_agreement.h)
  // Same value <=> the same physical GPU (machine and bus id, whatever
  // HETCCL_HOSTID says); 0 for CPU ranks and emulated GPUs.
  uint64_t gpuId;

  // This process as `rank` of `nranks`, its host id and domain label taken
  // from `settings` (HETCCL_HOSTID, HETCCL_DOMAINS; throws
  // ncclInvalidArgument if either is malformed) unless `inherited` gives
  // them (communicators split from a parent keep the parent's placement),
  // and the digest of its settings that must agree.
  // `gpu`: the rank's GPU, if it is a GPU rank.
  static PeerInfo local(int rank, int nranks, std::optional<GpuDevice> gpu,
                        const Settings& settings,
                        std::optional<Placement> inherited = {});
};

// Throws ncclInvalidUsage naming both builds if the ranks do not all run
// the same HetCCL release and protocol (an NVIDIA node and an AMD node
// installed separately); every rank sees every PeerInfo, so all fail alike.
void checkSameBuild(const std::vector<PeerInfo>& peers);

}  // namespace hetccl
