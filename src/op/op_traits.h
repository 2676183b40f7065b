// What NCCL documents about each operation kind, in one table: which
// buffers each rank reads and writes (and how large they are), whether the
// op has a root or a peer, whether it reduces and whether it has an
// in-place form. The table is op/kinds/op_kinds.def, which hetccl-perf and
// the multi-process tests expand too. Argument checks, the GPU
// staging layout and the dispatchers read it here rather than each keeping
// its own copy; a dispatcher that must treat kinds differently uses a
// switch with no default, so that a new kind does not compile until every
// layer handles it (the core builds with -Werror=switch).
#pragma once

#include <cstddef>

#include "op/call_signature.h"
#include "op/op.h"

namespace hetccl {

// The row of each kind (op/kinds/op_kinds.def); the tools read the same.
using op_kinds::BufferRole;
using op_kinds::BufferTraits;
using op_kinds::OpTraits;

const OpTraits& opTraits(OpKind kind);
// Null for a value outside the enum (a signature read from another rank's
// memory or message is not trusted to hold a kind).
const OpTraits* findOpTraits(OpKind kind);
// After a switch over every kind: only a value outside the enum (memory
// corruption) gets there.
[[noreturn]] void failUnknownOpKind(OpKind kind);
inline const char* opKindName(OpKind kind) { return opTraits(kind).name; }
inline bool isPointToPoint(OpKind kind) { return opTraits(kind).hasPeer; }

// What ranks compare to catch calls that disagree.
CallSignature signatureOf(const Op& op);

// One of an op's buffers as one rank sees it.
struct BufferSpan {
  const char* pointer;
  size_t bytes;
  bool used;  // this rank reads (send side) or writes (receive side) it
};

BufferSpan sendSpan(const Op& op, int rank, int nranks);
BufferSpan recvSpan(const Op& op, int rank, int nranks);

}  // namespace hetccl
