#include "op/call_disagreement.h"

#include "util/wire.h"

namespace hetccl {

Error callDisagreement(int rankA, const CallSignature& a, int rankB,
                       const CallSignature& b) {
  const std::string text = rankA < rankB
                               ? describeDisagreement(rankA, a, rankB, b)
                               : describeDisagreement(rankB, b, rankA, a);
  return Error(ncclInvalidUsage, text);
}

void encodeCall(const CallSignature& call, uint8_t* out) {
  storeLe64(out, call.sequence);
  storeLe64(out + 8, call.count);
  storeLe32(out + 16, static_cast<uint32_t>(call.root));
  out[20] = static_cast<uint8_t>(call.call);
  out[21] = call.dtype;
  out[22] = call.redOp;
  out[23] = call.reduceFlags;
}

CallSignature decodeCall(const uint8_t* in) {
  CallSignature call;
  call.sequence = loadLe64(in);
  call.count = loadLe64(in + 8);
  call.root = static_cast<int32_t>(loadLe32(in + 16));
  call.call = static_cast<OpKind>(in[20]);
  call.dtype = in[21];
  call.redOp = in[22];
  call.reduceFlags = in[23];
  return call;
}

}  // namespace hetccl
