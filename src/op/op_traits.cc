#include "op/op_traits.h"

#include "util/dtype.h"
#include "util/error.h"

namespace hetccl {
namespace {

BufferSpan span(const void* pointer, const BufferTraits& traits, const Op& op,
                int rank, int nranks) {
  size_t bytes = op.count * dtypeSize(op.dtype) *
                 (traits.scaledByRanks ? static_cast<size_t>(nranks) : 1);
  bool used = traits.role == BufferRole::AllRanks ||
              (traits.role == BufferRole::RootOnly && rank == op.root);
  if (traits.role == BufferRole::Unused) bytes = 0;
  return {static_cast<const char*>(pointer), bytes, used};
}

}  // namespace

const OpTraits* findOpTraits(OpKind kind) { return op_kinds::findTraits(kind); }

const OpTraits& opTraits(OpKind kind) {
  const OpTraits* traits = findOpTraits(kind);
  if (traits == nullptr) failUnknownOpKind(kind);
  return *traits;
}

void failUnknownOpKind(OpKind kind) {
  fail(ncclInternalError, "operation kind %d does not exist",
       static_cast<int>(kind));
}

BufferSpan sendSpan(const Op& op, int rank, int nranks) {
  return span(op.sendbuff, opTraits(op.kind).send, op, rank, nranks);
}

BufferSpan recvSpan(const Op& op, int rank, int nranks) {
  return span(op.recvbuff, opTraits(op.kind).recv, op, rank, nranks);
}

namespace {

uint8_t reduceFlagsOf(const ReduceSpec& reduce) {
  uint8_t flags = 0;
  if (reduce.average) flags |= CallSignature::kAverage;
  if (reduce.preMultiply) flags |= CallSignature::kPremultiplied;
  if (reduce.preMultiply && reduce.scalarPointer != nullptr)
    flags |= CallSignature::kDeviceScalar;
  return flags;
}

}  // namespace

CallSignature signatureOf(const Op& op) {
  const OpTraits& traits = opTraits(op.kind);
  CallSignature signature;
  signature.sequence = op.sequence;
  signature.count = op.count;
  signature.root = traits.hasRoot || traits.hasPeer ? op.root : -1;
  signature.call = op.kind;
  signature.dtype = static_cast<uint8_t>(op.dtype);
  if (traits.reduces) {
    signature.redOp = static_cast<uint8_t>(op.reduce.base);
    signature.reduceFlags = reduceFlagsOf(op.reduce);
  }
  return signature;
}

}  // namespace hetccl
