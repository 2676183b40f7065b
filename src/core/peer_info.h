// What every rank tells the others at init.
#pragma once

#include <cstdint>

namespace hetccl {

struct PeerInfo {
  uint64_t hostId;     // same value <=> same host (and network namespace)
  int32_t pid;
  int32_t runtime;     // RuntimeKind
  int32_t device;      // device ordinal; -1 for CPU ranks
  int32_t domainLabel; // forced domain (HETCCL_DOMAINS), or -1
  char hostname[64];

  static PeerInfo local(int rank);
};

}  // namespace hetccl
