// The error of two ranks whose calls disagree, and how signatures travel
// between hosts. Both ranks that see a disagreement word it alike (the
// lower rank first), so that every rank reports the same message whichever
// of them noticed first.
#pragma once

#include <cstddef>
#include <cstdint>

#include "op/call_signature.h"
#include "util/error.h"

namespace hetccl {

// ncclInvalidUsage, with describeDisagreement's message.
Error callDisagreement(int rankA, const CallSignature& a, int rankB,
                       const CallSignature& b);

// A signature as 24 little-endian bytes: sequence(8) count(8) root(4)
// call(1) dtype(1) redOp(1) reduceFlags(1).
constexpr size_t kEncodedCallBytes = 24;
void encodeCall(const CallSignature& call, uint8_t* out);
CallSignature decodeCall(const uint8_t* in);

}  // namespace hetccl
