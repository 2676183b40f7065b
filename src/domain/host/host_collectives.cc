#include "domain/host/host_collectives.h"

#include <algorithm>
#include <cstring>

#include "op/op_traits.h"
#include "util/dtype.h"
#include "util/error.h"

namespace hetccl {
namespace {

// Rank i's slice of n elements split as evenly as possible among `parts`.
size_t sliceBegin(size_t n, int parts, int i) {
  return n * static_cast<size_t>(i) / static_cast<size_t>(parts);
}

}  // namespace

HostCollectives::HostCollectives(ShmWorld& world, MemoryWorkers& workers)
    : world_(world),
      workers_(workers),
      sendLocks_(new std::mutex[world.nranks()]),
      receiveLocks_(new std::mutex[world.nranks()]),
      rank_(world.rank()),
      nranks_(world.nranks()),
      directReduceMax_(world.settings().directReduceMax),
      sentChunks_(world.nranks(), 0),
      receivedChunks_(world.nranks(), 0),
      sources_(world.nranks()) {}

void HostCollectives::run(const std::vector<Op>& ops) {
  bool anyP2p = false;
  {
    std::unique_lock<std::mutex> lock(collectiveMutex_, std::defer_lock);
    for (const Op& op : ops) {
      if (isPointToPoint(op.kind)) {
        anyP2p = true;
        continue;
      }
      if (!lock.owns_lock()) lock.lock();
      runCollective(op);
    }
  }
  if (!anyP2p) return;
  std::vector<const Op*> pointToPoint;
  for (const Op& op : ops)
    if (isPointToPoint(op.kind)) pointToPoint.push_back(&op);
  sendRecv(pointToPoint);
}

// The call is on the board before any flag of it.
void HostCollectives::runCollective(const Op& op) {
  if (op.blockStride != 0 &&
      (op.kind != OpKind::ReduceScatter || op.blockStride < op.count))
    fail(ncclInternalError,
         "%s with input blocks %zu elements apart, of %zu elements each: "
         "only a reduce-scatter's blocks may lie apart, and not overlap",
         opKindName(op.kind), op.blockStride, op.count);
  world_.board().begin(++collectives_, signatureOf(op));
  if (nranks_ == 1) return runAlone(op);
  switch (op.kind) {
    case OpKind::AllReduce:
      return allReduce(op);
    case OpKind::Reduce:
      return reduce(op);
    case OpKind::ReduceScatter:
      return reduceScatter(op);
    case OpKind::AllGather:
      return allGather(op);
    case OpKind::Gather:
      return gather(op);
    case OpKind::Broadcast:
      return broadcast(op);
    case OpKind::Scatter:
      return scatter(op);
    case OpKind::AlltoAll:
      return allToAll(op);
    case OpKind::Send:
    case OpKind::Recv:
      fail(ncclInternalError, "not a collective: %s", opKindName(op.kind));
  }
}

// Every kind reads and writes one block of op.count elements here. The
// cross-domain plans of CPU ranks (one rank per domain is their common
// layout between hosts) call these steps chunk by chunk, so staging them
// in shared memory would cost a copy of every chunk for nothing.
void HostCollectives::runAlone(const Op& op) {
  const Reduction reduction = op.reduce.over(op.dtype, 1);
  if (opTraits(op.kind).reduces && reduction.preScale != nullptr) {
    const void* source = op.sendbuff;
    return workers_.reduce(op.recvbuff, &source, 1, op.count, reduction);
  }
  if (op.sendbuff != op.recvbuff)
    workers_.copy(op.recvbuff, op.sendbuff, op.count * dtypeSize(op.dtype));
}

// Elements [offset, offset + n) of every block of a collective's buffers.
// A collective of one block per rank (all-gather's output, scatter's
// input, ...) moves the same part of each block in a round; its staging
// buffers then hold one piece of n elements per block.
struct HostCollectives::Round {
  uint64_t k;         // the round's number on every rank's flags
  size_t offset;      // elements into each block
  size_t n;           // elements of each block
  size_t elt;         // bytes per element
  size_t count;       // elements per block
  size_t sendStride;  // elements from one block of the input to the next
  const char* send;
  char* recv;

  size_t bytes() const { return n * elt; }
  const char* sendPart(int block) const {
    return send + (block * sendStride + offset) * elt;
  }
  char* recvPart(int block) const {
    return recv + (block * count + offset) * elt;
  }
  // Where a staging buffer holds its piece of block `block`.
  size_t pieceAt(int block) const { return block * n * elt; }
  char* piece(char* staging, int block) const {
    return staging + pieceAt(block);
  }
};

template <typename Body>
void HostCollectives::forEachRound(const Op& op, size_t perRound, Body body) {
  const size_t elt = dtypeSize(op.dtype);
  const auto* send = static_cast<const char*>(op.sendbuff);
  auto* recv = static_cast<char*>(op.recvbuff);
  for (size_t offset = 0; offset < op.count; offset += perRound)
    body(Round{beginRound(), offset, std::min(perRound, op.count - offset), elt,
               op.count, op.blockStride != 0 ? op.blockStride : op.count, send,
               recv});
}

uint64_t HostCollectives::beginRound() { return ++round_; }

void HostCollectives::guardInput(uint64_t round) {
  if (round > 2) waitAllDone(round - 2);
}

void HostCollectives::guardOutput(uint64_t round) {
  if (round > 2)
    world_.waitAll([&](int r) -> ShmCounter& { return world_.freed(r); },
                   round - 2, "outputs of an earlier round to be read");
}

void HostCollectives::postReady(uint64_t round) {
  ShmWorld::post(world_.ready(rank_), round);
}
void HostCollectives::postDone(uint64_t round) {
  ShmWorld::post(world_.done(rank_), round);
}
void HostCollectives::postFreed(uint64_t round) {
  ShmWorld::post(world_.freed(rank_), round);
}
void HostCollectives::endRound(uint64_t round) {
  postDone(round);
  postFreed(round);
}

void HostCollectives::waitAllReady(uint64_t round) {
  world_.waitAll([&](int r) -> ShmCounter& { return world_.ready(r); }, round,
                 "its input of a collective");
}

void HostCollectives::waitAllDone(uint64_t round) {
  world_.waitAll([&](int r) -> ShmCounter& { return world_.done(r); }, round,
                 "its share of a collective");
}

void HostCollectives::publishInput(const Round& round) {
  guardInput(round.k);
  workers_.copy(world_.input(rank_, round.k), round.sendPart(0), round.bytes());
  postReady(round.k);
}

void HostCollectives::publishPieces(const Round& round, bool includingOwn) {
  guardInput(round.k);
  char* staged = world_.input(rank_, round.k);
  for (int r = 0; r < nranks_; ++r)
    if (includingOwn || r != rank_)
      workers_.copy(round.piece(staged, r), round.sendPart(r), round.bytes());
  postReady(round.k);
}

size_t HostCollectives::elementsPerBuffer(const Op& op) const {
  return world_.settings().chunkBytes / dtypeSize(op.dtype);
}

size_t HostCollectives::elementsPerPiece(const Op& op) const {
  return std::max<size_t>(1, elementsPerBuffer(op) / nranks_);
}

// A rank's slice of a round is empty when the round has fewer elements
// than there are ranks.
void HostCollectives::reduceStaged(const Op& op, uint64_t round,
                                   const char* own, size_t stagedAt, size_t n,
                                   char* dst) {
  if (n == 0) return;
  for (int r = 0; r < nranks_; ++r)
    sources_[r] = r == rank_ ? own : world_.input(r, round) + stagedAt;
  workers_.reduce(dst, sources_.data(), nranks_, n,
                  op.reduce.over(op.dtype, nranks_));
}

// All-reduce and reduce share their rounds. Small rounds are reduced whole
// (by every rank for all-reduce, by the root for reduce): one exchange
// instead of two. Large rounds are split into one slice per rank.
void HostCollectives::allReduce(const Op& op) { reduceRounds(op, true); }

void HostCollectives::reduce(const Op& op) { reduceRounds(op, false); }

void HostCollectives::reduceRounds(const Op& op, bool everyRankReceives) {
  const bool receives = everyRankReceives || rank_ == op.root;
  forEachRound(op, elementsPerBuffer(op), [&](const Round& round) {
    if (round.bytes() <= directReduceMax_)
      reduceWhole(op, round, receives);
    else
      reduceBySlices(op, round, receives);
  });
}

void HostCollectives::reduceWhole(const Op& op, const Round& round,
                                  bool receives) {
  publishInput(round);
  if (receives) {
    waitAllReady(round.k);
    reduceStaged(op, round.k, round.sendPart(0), 0, round.n, round.recvPart(0));
  }
  endRound(round.k);
}

// A rank stages only the slices others reduce, reduces its own slice
// reading its own part straight from its send buffer, and publishes the
// result; then the receivers copy every slice.
void HostCollectives::reduceBySlices(const Op& op, const Round& round,
                                     bool receives) {
  const size_t elt = round.elt;
  const char* own = round.sendPart(0);
  const size_t ownBegin = sliceBegin(round.n, nranks_, rank_);
  const size_t ownEnd = sliceBegin(round.n, nranks_, rank_ + 1);
  guardInput(round.k);
  char* staged = world_.input(rank_, round.k);
  workers_.copy(staged, own, ownBegin * elt);
  workers_.copy(staged + ownEnd * elt, own + ownEnd * elt,
                (round.n - ownEnd) * elt);
  postReady(round.k);
  waitAllReady(round.k);
  guardOutput(round.k);
  reduceStaged(op, round.k, own + ownBegin * elt, ownBegin * elt,
               ownEnd - ownBegin, world_.output(rank_, round.k));
  postDone(round.k);
  if (receives) {
    waitAllDone(round.k);
    for (int r = 0; r < nranks_; ++r) {
      const size_t begin = sliceBegin(round.n, nranks_, r);
      const size_t end = sliceBegin(round.n, nranks_, r + 1);
      workers_.copy(round.recvPart(0) + begin * elt, world_.output(r, round.k),
                    (end - begin) * elt);
    }
  }
  postFreed(round.k);
}

// Reduce-scatter: each round stages a piece of every other rank's block;
// each rank reduces the pieces of its own block, its own part read straight
// from its send buffer, into its output.
void HostCollectives::reduceScatter(const Op& op) {
  forEachRound(op, elementsPerPiece(op), [&](const Round& round) {
    publishPieces(round, /*includingOwn=*/false);
    waitAllReady(round.k);
    reduceStaged(op, round.k, round.sendPart(rank_), round.pieceAt(rank_),
                 round.n, round.recvPart(0));
    endRound(round.k);
  });
}

void HostCollectives::allGather(const Op& op) {
  forEachRound(op, elementsPerBuffer(op), [&](const Round& round) {
    publishInput(round);
    waitAllReady(round.k);
    const char* own = round.sendPart(0);
    for (int r = 0; r < nranks_; ++r) {
      char* slot = round.recvPart(r);
      if (r != rank_)
        workers_.copy(slot, world_.input(r, round.k), round.bytes());
      else if (slot != own)  // else in place
        std::memmove(slot, own, round.bytes());
    }
    endRound(round.k);
  });
}

void HostCollectives::gather(const Op& op) {
  forEachRound(op, elementsPerBuffer(op), [&](const Round& round) {
    publishInput(round);
    if (rank_ == op.root) {
      waitAllReady(round.k);
      for (int r = 0; r < nranks_; ++r)
        workers_.copy(round.recvPart(r), world_.input(r, round.k),
                      round.bytes());
    }
    endRound(round.k);
  });
}

// Only the root stages; the others post ready at once, as every rank posts
// every flag of every round.
void HostCollectives::broadcast(const Op& op) {
  forEachRound(op, elementsPerBuffer(op), [&](const Round& round) {
    if (rank_ == op.root) {
      publishInput(round);
      if (op.recvbuff != op.sendbuff)
        std::memmove(round.recvPart(0), round.sendPart(0), round.bytes());
    } else {
      postReady(round.k);
      world_.waitFor(world_.ready(op.root), round.k, op.root, "broadcast data");
      workers_.copy(round.recvPart(0), world_.input(op.root, round.k),
                    round.bytes());
    }
    endRound(round.k);
  });
}

void HostCollectives::scatter(const Op& op) {
  forEachRound(op, elementsPerPiece(op), [&](const Round& round) {
    if (rank_ == op.root)
      publishPieces(round, /*includingOwn=*/true);
    else
      postReady(round.k);
    world_.waitFor(world_.ready(op.root), round.k, op.root, "scatter data");
    workers_.copy(round.recvPart(0),
                  round.piece(world_.input(op.root, round.k), rank_),
                  round.bytes());
    endRound(round.k);
  });
}

void HostCollectives::allToAll(const Op& op) {
  forEachRound(op, elementsPerPiece(op), [&](const Round& round) {
    publishPieces(round, /*includingOwn=*/true);
    waitAllReady(round.k);
    for (int r = 0; r < nranks_; ++r)
      workers_.copy(round.recvPart(r),
                    round.piece(world_.input(r, round.k), rank_),
                    round.bytes());
    endRound(round.k);
  });
}

}  // namespace hetccl
