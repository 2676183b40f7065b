// What NCCL documents about each operation kind, in one table: which
// buffers each rank reads and writes (and how large they are), whether the
// op has a root or a peer, and whether it reduces. Argument checks, the GPU
// staging layout and the dispatchers read it here rather than each keeping
// its own copy; a dispatcher that must treat kinds differently uses a
// switch with no default, so that a new kind does not compile until every
// layer handles it (the core builds with -Werror=switch).
#pragma once

#include <cstddef>

#include "op/call_signature.h"
#include "op/op.h"

namespace hetccl {

// Which ranks touch one of an op's buffers.
enum class BufferRole {
  Unused,    // no rank (the receive buffer of a send)
  AllRanks,  // every rank
  RootOnly,  // only the root (a reduce's output, a broadcast's input)
};

struct BufferTraits {
  BufferRole role;
  bool scaledByRanks;  // holds count * nranks elements, not count
};

struct OpTraits {
  const char* name;
  BufferTraits send;  // read
  BufferTraits recv;  // written
  bool hasRoot;       // Op::root is the root
  bool hasPeer;       // Op::root is the peer (send, recv)
  bool reduces;       // Op::reduce applies
};

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
