// What NCCL documents about each of its operations, expanded from
// op_kinds.def: the kinds (OpKind) and one row of traits per kind, which
// buffers each rank reads and writes and how large they are, whether the
// root argument is a root or a peer, whether the op reduces and whether it
// has an in-place form.
//
// The library (op/op.h, op/op_traits.h), hetccl-perf (tools/perf) and the
// multi-process harness (tests/mp/harness) all read this one table, so a
// new operation is described once. The tools reach NCCL through nccl.h
// only and never link HetCCL (tools/CMakeLists.txt), so they put this
// folder, and only it, on their include path: this header and op_kinds.def
// must stay free of dependencies (the standard library's <cstddef> and
// <cstdint> only, no HetCCL header, no nccl.h, nothing to link).
#pragma once

#include <cstddef>
#include <cstdint>

namespace hetccl {
namespace op_kinds {

// One byte: it travels in call signatures (op/call_signature.h).
enum class OpKind : uint8_t {
#define HETCCL_COLLECTIVE(kind, ...) kind,
#define HETCCL_POINT_TO_POINT(kind, ...) kind,
#include "op_kinds.def"
#undef HETCCL_COLLECTIVE
#undef HETCCL_POINT_TO_POINT
};

// Which ranks touch one of an op's buffers.
enum class BufferRole : uint8_t {
  Unused,    // no rank (the receive buffer of a send)
  AllRanks,  // every rank
  RootOnly,  // only the root (a reduce's output, a broadcast's input)
};

struct BufferTraits {
  BufferRole role;
  bool scaledByRanks;  // holds count * nranks elements, not count
};

struct OpTraits {
  const char* name;     // "AllReduce"
  const char* cliName;  // "allreduce": nccl-tests' and hetccl-perf's name
  BufferTraits send;    // read
  BufferTraits recv;    // written
  bool hasRoot;         // the root argument is the root
  bool hasPeer;         // the root argument is the peer (send, recv)
  bool reduces;         // takes a reduction op
  bool hasInPlaceForm;  // NCCL defines the call with sendbuff in recvbuff
};

// The names op_kinds.def's rows use.
namespace columns {
enum class Addressee : uint8_t { Neither, Root, Peer };
constexpr Addressee kNeither = Addressee::Neither;
constexpr Addressee kRoot = Addressee::Root;
constexpr Addressee kPeer = Addressee::Peer;
constexpr BufferTraits kNone{BufferRole::Unused, false};
constexpr BufferTraits kOne{BufferRole::AllRanks, false};
constexpr BufferTraits kAll{BufferRole::AllRanks, true};
constexpr BufferTraits kOneAtRoot{BufferRole::RootOnly, false};
constexpr BufferTraits kAllAtRoot{BufferRole::RootOnly, true};

constexpr OpTraits row(const char* name, const char* cliName, BufferTraits send,
                       BufferTraits recv, Addressee addressee, bool reduces,
                       bool inPlace) {
  return OpTraits{name,
                  cliName,
                  send,
                  recv,
                  addressee == Addressee::Root,
                  addressee == Addressee::Peer,
                  reduces,
                  inPlace};
}

// The rows, indexed by OpKind.
inline constexpr OpTraits kRows[] = {
#define HETCCL_COLLECTIVE(kind, ...) row(__VA_ARGS__),
#define HETCCL_POINT_TO_POINT(kind, ...) row(__VA_ARGS__),
#include "op_kinds.def"
#undef HETCCL_COLLECTIVE
#undef HETCCL_POINT_TO_POINT
};
}  // namespace columns

// Indexed by OpKind.
inline constexpr const auto& kOpTraits = columns::kRows;
constexpr size_t kOpKindCount = sizeof(kOpTraits) / sizeof(kOpTraits[0]);

// The collectives are OpKind's first kCollectiveCount values; the
// point-to-point kinds follow.
constexpr size_t kCollectiveCount = 0
#define HETCCL_COLLECTIVE(kind, ...) +1
#define HETCCL_POINT_TO_POINT(kind, ...)
#include "op_kinds.def"
#undef HETCCL_COLLECTIVE
#undef HETCCL_POINT_TO_POINT
    ;

// Null for a value outside the enum (a kind read from another rank's
// memory is not trusted).
constexpr const OpTraits* findTraits(OpKind kind) {
  return static_cast<size_t>(kind) < kOpKindCount
             ? &kOpTraits[static_cast<size_t>(kind)]
             : nullptr;
}

// A kind of the enum's (see findTraits for one that may not be).
constexpr const OpTraits& traitsOf(OpKind kind) {
  return kOpTraits[static_cast<size_t>(kind)];
}

// The rows agree with the macro that wrote them: collectives first, with
// no peer; point-to-point kinds after, with a peer.
#define HETCCL_COLLECTIVE(kind, ...)                                    \
  static_assert(static_cast<size_t>(OpKind::kind) < kCollectiveCount && \
                    !traitsOf(OpKind::kind).hasPeer,                    \
                #kind " is a collective");
#define HETCCL_POINT_TO_POINT(kind, ...)                                 \
  static_assert(static_cast<size_t>(OpKind::kind) >= kCollectiveCount && \
                    traitsOf(OpKind::kind).hasPeer,                      \
                #kind " is point-to-point");
#include "op_kinds.def"
#undef HETCCL_COLLECTIVE
#undef HETCCL_POINT_TO_POINT

}  // namespace op_kinds
}  // namespace hetccl
