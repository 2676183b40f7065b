// What a rank called, in the few bytes that ranks can compare where they
// already meet (message headers, shared segments): an operation's number,
// the NCCL call, its count, type, reduction and root or peer. Two ranks
// that disagree on any of these would otherwise exchange buffers of
// different meaning and report success; with the signatures, the
// operation fails on every rank that sees both, naming both calls.
#pragma once

#include <cstdint>
#include <string>

#include "op/op.h"

namespace hetccl {

struct CallSignature {
  // Collectives: the collective's number on its communicator; sends and
  // receives: the transfer's number between the pair, in its direction.
  uint64_t sequence = 0;
  uint64_t count = 0;
  int32_t root = -1;                // root or peer; -1 for calls with neither
  OpKind call = OpKind::AllReduce;  // the NCCL call it came from
  uint8_t dtype = 0;                // ncclDataType_t
  uint8_t redOp = kNoReduction;     // the base ncclRedOp_t
  uint8_t reduceFlags = 0;          // kAverage | kPremultiplied | kDeviceScalar

  static constexpr uint8_t kNoReduction = 0xff;
  static constexpr uint8_t kAverage = 1;
  static constexpr uint8_t kPremultiplied = 2;
  static constexpr uint8_t kDeviceScalar = 4;  // ncclScalarDevice

  bool pointToPoint() const {
    return call == OpKind::Send || call == OpKind::Recv;
  }
};
static_assert(sizeof(CallSignature) == 24, "signatures travel in headers");

// "allReduce(1048576 x float32, sum)", "send(64 x int8, to rank 3)".
std::string describeCall(const CallSignature& call);
// Whether two ranks' calls belong together: equal for collectives; a send
// and the receive it meets carry the same number, count and type.
bool callsAgree(const CallSignature& a, const CallSignature& b);
// "op #17: rank 0 called allReduce(...) but rank 1 called broadcast(...)".
std::string describeDisagreement(int rankA, const CallSignature& a, int rankB,
                                 const CallSignature& b);

}  // namespace hetccl
