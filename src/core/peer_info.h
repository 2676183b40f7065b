// What every rank tells the others at init.
#pragma once

#include <cstdint>

namespace hetccl {

struct PeerInfo {
  uint64_t hostId;     // same value <=> same host (and network namespace)
  int32_t pid;
  int32_t runtime;     // RuntimeKind
  int32_t device;      // device ordinal; -1 for CPU ranks
  int32_t domainLabel; // from HETCCL_DOMAINS (see domains.h)
  char hostname[64];

  // This process as `rank` of `nranks`; throws ncclInvalidArgument for a
  // malformed HETCCL_DOMAINS.
  static PeerInfo local(int rank, int nranks);
};

}  // namespace hetccl
