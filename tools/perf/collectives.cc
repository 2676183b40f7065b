#include "perf/collectives.h"

#include <cstdint>
#include <utility>

namespace hetccl {
namespace perf {
namespace {

using op_kinds::OpKind;
using op_kinds::OpTraits;

// The collectives' kinds are OpKind's first values, in its order.
#define HETCCL_COLLECTIVE(kind, ...)                                         \
  static_assert(                                                             \
      static_cast<int>(CollKind::k##kind) == static_cast<int>(OpKind::kind), \
      "CollKind::k" #kind " is OpKind::" #kind);
#define HETCCL_POINT_TO_POINT(kind, ...)
#include "op_kinds.def"
#undef HETCCL_COLLECTIVE
#undef HETCCL_POINT_TO_POINT
static_assert(static_cast<size_t>(CollKind::kSendRecv) ==
                  op_kinds::kCollectiveCount,
              "sendrecv follows the collectives");

// The rows a kind's ranks follow: the sending side's (whose send buffer
// it reads) and the receiving side's (whose receive buffer it writes).
// One row for a collective; the Send and Recv rows for sendrecv.
struct Sides {
  const OpTraits& sender;
  const OpTraits& receiver;
};

Sides sidesOf(CollKind kind) {
  if (kind == CollKind::kSendRecv) {
    return {op_kinds::traitsOf(OpKind::Send), op_kinds::traitsOf(OpKind::Recv)};
  }
  const OpTraits& row = op_kinds::traitsOf(static_cast<OpKind>(kind));
  return {row, row};
}

bool sendIsPerRank(CollKind kind) {
  return sidesOf(kind).sender.send.scaledByRanks;
}

bool recvIsPerRank(CollKind kind) {
  return sidesOf(kind).receiver.recv.scaledByRanks;
}

// Whether a buffer holds one part per rank (the size is the total).
bool isSplitAcrossRanks(CollKind kind) {
  return sendIsPerRank(kind) || recvIsPerRank(kind);
}

// Whether each rank sends (receives) one part and receives (sends) one
// part per rank.
bool gathers(CollKind kind) {
  return recvIsPerRank(kind) && !sendIsPerRank(kind);
}

bool scatters(CollKind kind) {
  return sendIsPerRank(kind) && !recvIsPerRank(kind);
}

Collective describe(CollKind kind, const char* name) {
  const Sides sides = sidesOf(kind);
  return Collective{
      kind, name, sides.sender.reduces || sides.receiver.reduces,
      sides.sender.hasRoot || sides.receiver.hasRoot,
      sides.sender.hasInPlaceForm && sides.receiver.hasInPlaceForm};
}

char* offsetBytes(void* base, size_t bytes) {
  return static_cast<char*>(base) + bytes;
}

// Runs `enqueue` (which returns the first failed call's result) between
// ncclGroupStart and ncclGroupEnd. The group is closed even when a call
// inside it failed.
template <typename Enqueue>
ncclResult_t inGroup(const NcclApi& nccl, const Enqueue& enqueue) {
  ncclResult_t result = nccl.groupStart();
  if (result != ncclSuccess) return result;
  result = enqueue();
  const ncclResult_t endResult = nccl.groupEnd();
  return result != ncclSuccess ? result : endResult;
}

ncclResult_t launchSendRecv(const CallContext& context, size_t count,
                            const CallBuffers& buffers) {
  const NcclApi& nccl = *context.nccl;
  const int next = (context.rank + 1) % context.nranks;
  const int previous = (context.rank + context.nranks - 1) % context.nranks;
  return inGroup(nccl, [&] {
    ncclResult_t result = nccl.send(buffers.send, count, context.dataType, next,
                                    context.comm, context.stream);
    if (result != ncclSuccess) return result;
    return nccl.recv(buffers.recv, count, context.dataType, previous,
                     context.comm, context.stream);
  });
}

// All-to-all for libraries without ncclAlltoAll: block p of the send buffer
// goes to rank p, block p of the receive buffer comes from rank p.
ncclResult_t launchAllToAllAsSendRecv(const CallContext& context, size_t count,
                                      const CallBuffers& buffers) {
  const NcclApi& nccl = *context.nccl;
  const size_t blockBytes = count * context.elementSize;
  return inGroup(nccl, [&] {
    for (int peer = 0; peer < context.nranks; ++peer) {
      const size_t offset = static_cast<size_t>(peer) * blockBytes;
      ncclResult_t result =
          nccl.send(static_cast<const char*>(buffers.send) + offset, count,
                    context.dataType, peer, context.comm, context.stream);
      if (result != ncclSuccess) return result;
      result = nccl.recv(offsetBytes(buffers.recv, offset), count,
                         context.dataType, peer, context.comm, context.stream);
      if (result != ncclSuccess) return result;
    }
    return ncclSuccess;
  });
}

// Gather (toRoot) or scatter for libraries without ncclGather or
// ncclScatter: every rank exchanges its part with the root, the root one
// part with every rank (itself included).
ncclResult_t launchRootedAsSendRecv(const CallContext& context, size_t count,
                                    const CallBuffers& buffers, bool toRoot) {
  const NcclApi& nccl = *context.nccl;
  const size_t blockBytes = count * context.elementSize;
  return inGroup(nccl, [&]() -> ncclResult_t {
    if (context.rank == context.root) {
      for (int peer = 0; peer < context.nranks; ++peer) {
        const size_t offset = static_cast<size_t>(peer) * blockBytes;
        ncclResult_t result =
            toRoot ? nccl.recv(offsetBytes(buffers.recv, offset), count,
                               context.dataType, peer, context.comm,
                               context.stream)
                   : nccl.send(static_cast<const char*>(buffers.send) + offset,
                               count, context.dataType, peer, context.comm,
                               context.stream);
        if (result != ncclSuccess) return result;
      }
    }
    return toRoot ? nccl.send(buffers.send, count, context.dataType,
                              context.root, context.comm, context.stream)
                  : nccl.recv(buffers.recv, count, context.dataType,
                              context.root, context.comm, context.stream);
  });
}

}  // namespace

const std::vector<Collective>& allCollectives() {
  // nccl-tests' order; every kind once.
  static constexpr CollKind kOrder[] = {
      CollKind::kAllReduce, CollKind::kAllGather, CollKind::kReduceScatter,
      CollKind::kBroadcast, CollKind::kReduce,    CollKind::kAlltoAll,
      CollKind::kGather,    CollKind::kScatter,   CollKind::kSendRecv,
  };
  static_assert(sizeof(kOrder) / sizeof(kOrder[0]) ==
                    static_cast<size_t>(CollKind::kSendRecv) + 1,
                "a collective of op_kinds.def is missing from the order");
  static const std::vector<Collective> collectives = [] {
    std::vector<Collective> list;
    for (CollKind kind : kOrder) {
      const char* name =
          kind == CollKind::kSendRecv
              ? "sendrecv"
              : op_kinds::traitsOf(static_cast<OpKind>(kind)).cliName;
      list.push_back(describe(kind, name));
    }
    return list;
  }();
  return collectives;
}

const Collective* findCollective(const std::string& name) {
  static const std::pair<const char*, const char*> kAliases[] = {
      {"all_reduce", "allreduce"},         {"all_gather", "allgather"},
      {"reduce_scatter", "reducescatter"}, {"bcast", "broadcast"},
      {"all_to_all", "alltoall"},          {"a2a", "alltoall"},
      {"send_recv", "sendrecv"},
  };
  std::string canonical = name;
  for (const auto& alias : kAliases) {
    if (name == alias.first) canonical = alias.second;
  }
  for (const Collective& collective : allCollectives()) {
    if (canonical == collective.name) return &collective;
  }
  return nullptr;
}

double busBandwidthFactor(CollKind kind, int nranks) {
  const double n = nranks;
  if (kind == CollKind::kAllReduce) return 2.0 * (n - 1) / n;
  // Each rank's part of the total crosses to the n - 1 others.
  if (isSplitAcrossRanks(kind)) return (n - 1) / n;
  return 1.0;
}

Shape shapeFor(CollKind kind, size_t requestedBytes, size_t elementSize,
               int nranks) {
  const size_t ranks = static_cast<size_t>(nranks);
  Shape shape{};
  if (isSplitAcrossRanks(kind)) {
    const size_t perRank = requestedBytes / elementSize / ranks;
    shape.count = perRank * ranks;
    shape.callCount = perRank;
    shape.sendCount = gathers(kind) ? perRank : shape.count;
    shape.recvCount = scatters(kind) ? perRank : shape.count;
  } else {
    shape.count = requestedBytes / elementSize;
    shape.callCount = shape.count;
    shape.sendCount = shape.count;
    shape.recvCount = shape.count;
  }
  shape.bytes = shape.count * elementSize;
  return shape;
}

CallBuffers callBuffers(CollKind kind, bool inPlace, void* sendBase,
                        void* recvBase, const Shape& shape, int rank,
                        size_t elementSize) {
  if (!inPlace) return CallBuffers{sendBase, recvBase};
  const size_t rankOffset =
      static_cast<size_t>(rank) * shape.callCount * elementSize;
  if (gathers(kind))
    return CallBuffers{offsetBytes(recvBase, rankOffset), recvBase};
  if (scatters(kind))
    return CallBuffers{recvBase, offsetBytes(recvBase, rankOffset)};
  return CallBuffers{recvBase, recvBase};
}

ncclResult_t launchCollective(const CallContext& context, const Shape& shape,
                              const CallBuffers& buffers) {
  const NcclApi& nccl = *context.nccl;
  const size_t count = shape.callCount;
  const ncclDataType_t type = context.dataType;
  switch (context.collective->kind) {
    case CollKind::kAllReduce:
      return nccl.allReduce(buffers.send, buffers.recv, count, type, context.op,
                            context.comm, context.stream);
    case CollKind::kAllGather:
      return nccl.allGather(buffers.send, buffers.recv, count, type,
                            context.comm, context.stream);
    case CollKind::kReduceScatter:
      return nccl.reduceScatter(buffers.send, buffers.recv, count, type,
                                context.op, context.comm, context.stream);
    case CollKind::kBroadcast:
      return nccl.broadcast(buffers.send, buffers.recv, count, type,
                            context.root, context.comm, context.stream);
    case CollKind::kReduce:
      return nccl.reduce(buffers.send, buffers.recv, count, type, context.op,
                         context.root, context.comm, context.stream);
    case CollKind::kAlltoAll:
      if (!nccl.alltoAll)
        return launchAllToAllAsSendRecv(context, count, buffers);
      return nccl.alltoAll(buffers.send, buffers.recv, count, type,
                           context.comm, context.stream);
    case CollKind::kGather:
      if (!nccl.gather)
        return launchRootedAsSendRecv(context, count, buffers, true);
      return nccl.gather(buffers.send, buffers.recv, count, type, context.root,
                         context.comm, context.stream);
    case CollKind::kScatter:
      if (!nccl.scatter)
        return launchRootedAsSendRecv(context, count, buffers, false);
      return nccl.scatter(buffers.send, buffers.recv, count, type, context.root,
                          context.comm, context.stream);
    case CollKind::kSendRecv:
      return launchSendRecv(context, count, buffers);
  }
  return ncclInvalidArgument;
}

}  // namespace perf
}  // namespace hetccl
