// One communication operation as the domain back-ends and plans see it:
// arguments already checked, user reduction ops already resolved.
#pragma once

#include <cstddef>
#include <cstdint>

#include "nccl.h"
#include "op/kinds/op_kinds.h"
#include "runtime/reduction.h"

namespace hetccl {

// NCCL's operations: AllReduce, Broadcast, ..., Send, Recv, one row each in
// op/kinds/op_kinds.def (one byte: it travels in call signatures).
using op_kinds::OpKind;

// A reduction with ncclAvg and PreMulSum expressed over the four base ops.
struct ReduceSpec {
  ncclRedOp_t base = ncclSum;  // ncclSum, ncclProd, ncclMax or ncclMin
  bool average = false;        // divide the result by the number of ranks
  bool preMultiply = false;    // multiply every input by the scalar first
  // The PreMulSum scalar: read through `scalarPointer` when it lives in
  // device memory (ncclScalarDevice), else held here by value.
  const void* scalarPointer = nullptr;
  uint64_t scalarValue = 0;

  const void* scalar() const {
    return scalarPointer != nullptr ? scalarPointer : &scalarValue;
  }
  // The engines' description of this reduction of `nranks` ranks' inputs
  // (the scalar must be readable by the engine that runs it).
  Reduction over(ncclDataType_t dtype, int nranks) const {
    Reduction r;
    r.dtype = dtype;
    r.op = base;
    if (preMultiply) r.preScale = scalar();
    if (average) r.divisor = static_cast<uint64_t>(nranks);
    return r;
  }
};

struct Op {
  OpKind kind = OpKind::AllReduce;
  const void* sendbuff = nullptr;
  void* recvbuff = nullptr;
  // Per-rank element count as NCCL defines it for each collective (recvcount
  // for ReduceScatter, sendcount for AllGather, per-peer for AlltoAll).
  size_t count = 0;
  ncclDataType_t dtype = ncclFloat32;
  ReduceSpec reduce;
  int root = 0;  // root of rooted collectives; the peer of Send and Recv
  // ReduceScatter inside a host domain only: elements from one rank's block
  // of the input to the next (0: count, the blocks adjoin). The plans set
  // it only where the domain communicator is the host collectives
  // (PlanContext::domainReadsBlocksApart), which read the blocks where
  // they lie instead of after a copy that lays them side by side.
  size_t blockStride = 0;
  // The call's number, the same on every rank that takes part: the
  // collective's on its communicator, or the transfer's between its two
  // ranks in its direction (CallSignature).
  uint64_t sequence = 0;
};

}  // namespace hetccl
