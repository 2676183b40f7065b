// The 128-byte ncclUniqueId: where the bootstrap root listens and the
// secret that ranks present to join. A checksum catches ids that were
// corrupted in transit or that another library produced.
//
// Layout (little-endian): magic "HCID" (4), format version (2), flags (2),
// root address (24, SocketAddress::encode), secret (16), zeros up to byte
// 120, then a 64-bit FNV-1a checksum of bytes 0..119.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "nccl.h"
#include "util/secret.h"
#include "util/socket_address.h"

namespace hetccl {

struct UniqueIdContents {
  SocketAddress root;
  Secret secret{};
  // The root address came from HETCCL_COMM_ID / NCCL_COMM_ID: nobody
  // listens there until rank 0 calls startRootIfNeeded.
  bool fixedRoot = false;
};

ncclUniqueId encodeUniqueId(const UniqueIdContents& contents);
// Throws ncclInvalidArgument "corrupted or foreign ncclUniqueId ...".
UniqueIdContents decodeUniqueId(const ncclUniqueId& id);

// When HETCCL_COMM_ID (else NCCL_COMM_ID) = host:port is set, the id that
// every process computes on its own: that address, and a secret derived
// from HETCCL_COMM_SECRET if set, else from the address text itself. The
// latter is weaker: anyone who knows the address can join. Throws
// ncclInvalidArgument if the variable does not parse.
std::optional<UniqueIdContents> fixedUniqueIdFromEnv();

}  // namespace hetccl
