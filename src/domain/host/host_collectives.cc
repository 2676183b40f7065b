#include "domain/host/host_collectives.h"

#include <algorithm>
#include <cstring>

#include "util/dtype.h"
#include "util/error.h"
#include "op/op_traits.h"

namespace hetccl {
namespace {

// Rank i's slice of n elements split as evenly as possible among `parts`.
size_t sliceBegin(size_t n, int parts, int i) {
  return n * static_cast<size_t>(i) / static_cast<size_t>(parts);
}

}  // namespace

HostCollectives::HostCollectives(ShmWorld& world)
    : world_(world),
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
  world_.board().begin(++collectives_, signatureOf(op));
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

void HostCollectives::waitAllReady(uint64_t round) {
  world_.waitAll([&](int r) -> ShmCounter& { return world_.ready(r); }, round,
                 "its input of a collective");
}

void HostCollectives::waitAllDone(uint64_t round) {
  world_.waitAll([&](int r) -> ShmCounter& { return world_.done(r); }, round,
                 "its share of a collective");
}

size_t HostCollectives::elementsPerBuffer(const Op& op) const {
  return world_.settings().chunkBytes / dtypeSize(op.dtype);
}

void HostCollectives::reduceSlice(const Op& op, uint64_t round, const char* ownInput,
                             size_t begin, size_t end, char* dst) {
  if (end <= begin) return;
  size_t elt = dtypeSize(op.dtype);
  for (int r = 0; r < nranks_; ++r)
    sources_[r] =
        (r == rank_ ? ownInput : world_.input(r, round)) + begin * elt;
  hostReduce(dst, sources_.data(), nranks_, end - begin,
             op.reduce.over(op.dtype, nranks_));
}

// All-reduce and reduce share their rounds. Small rounds are reduced whole
// (by every rank for all-reduce, by the root for reduce): one exchange
// instead of two. Large rounds are split into one slice per rank: a rank
// stages only the slices others reduce, reduces its own slice reading its
// own part straight from its send buffer, and publishes the result; then
// the receivers copy every slice.
void HostCollectives::allReduce(const Op& op) { reduceRounds(op, true); }

void HostCollectives::reduce(const Op& op) { reduceRounds(op, false); }

void HostCollectives::reduceRounds(const Op& op, bool everyRankReceives) {
  size_t elt = dtypeSize(op.dtype);
  size_t perRound = elementsPerBuffer(op);
  const char* send = static_cast<const char*>(op.sendbuff);
  char* recv = static_cast<char*>(op.recvbuff);
  bool receives = everyRankReceives || rank_ == op.root;
  for (size_t offset = 0; offset < op.count; offset += perRound) {
    size_t n = std::min(perRound, op.count - offset);
    const char* ownInput = send + offset * elt;
    uint64_t k = beginRound();
    guardInput(k);
    char* staged = world_.input(rank_, k);
    if (n * elt <= directReduceMax_) {
      std::memcpy(staged, ownInput, n * elt);
      postReady(k);
      if (receives) {
        waitAllReady(k);
        reduceSlice(op, k, ownInput, 0, n, recv + offset * elt);
      }
      postDone(k);
      postFreed(k);
      continue;
    }
    size_t ownBegin = sliceBegin(n, nranks_, rank_);
    size_t ownEnd = sliceBegin(n, nranks_, rank_ + 1);
    std::memcpy(staged, ownInput, ownBegin * elt);
    std::memcpy(staged + ownEnd * elt, ownInput + ownEnd * elt,
                (n - ownEnd) * elt);
    postReady(k);
    waitAllReady(k);
    guardOutput(k);
    reduceSlice(op, k, ownInput, ownBegin, ownEnd, world_.output(rank_, k));
    postDone(k);
    if (receives) {
      waitAllDone(k);
      for (int r = 0; r < nranks_; ++r) {
        size_t begin = sliceBegin(n, nranks_, r);
        size_t end = sliceBegin(n, nranks_, r + 1);
        std::memcpy(recv + (offset + begin) * elt, world_.output(r, k),
                    (end - begin) * elt);
      }
    }
    postFreed(k);
  }
}

// Reduce-scatter: each round stages a piece of every other rank's block;
// each rank reduces the pieces of its own block, its own part read straight
// from its send buffer, into its output.
void HostCollectives::reduceScatter(const Op& op) {
  size_t elt = dtypeSize(op.dtype);
  size_t perPiece = std::max<size_t>(1, elementsPerBuffer(op) / nranks_);
  const char* send = static_cast<const char*>(op.sendbuff);
  char* recv = static_cast<char*>(op.recvbuff);
  for (size_t offset = 0; offset < op.count; offset += perPiece) {
    size_t n = std::min(perPiece, op.count - offset);
    uint64_t k = beginRound();
    guardInput(k);
    char* staged = world_.input(rank_, k);
    for (int r = 0; r < nranks_; ++r)
      if (r != rank_)
        std::memcpy(staged + r * n * elt, send + (r * op.count + offset) * elt,
                    n * elt);
    postReady(k);
    waitAllReady(k);
    for (int r = 0; r < nranks_; ++r)
      sources_[r] = r == rank_ ? send + (r * op.count + offset) * elt
                               : world_.input(r, k) + rank_ * n * elt;
    hostReduce(recv + offset * elt, sources_.data(), nranks_, n,
               op.reduce.over(op.dtype, nranks_));
    postDone(k);
    postFreed(k);
  }
}

void HostCollectives::allGather(const Op& op) {
  size_t elt = dtypeSize(op.dtype);
  size_t perRound = elementsPerBuffer(op);
  const char* send = static_cast<const char*>(op.sendbuff);
  char* recv = static_cast<char*>(op.recvbuff);
  for (size_t offset = 0; offset < op.count; offset += perRound) {
    size_t n = std::min(perRound, op.count - offset);
    uint64_t k = beginRound();
    guardInput(k);
    std::memcpy(world_.input(rank_, k), send + offset * elt, n * elt);
    postReady(k);
    waitAllReady(k);
    for (int r = 0; r < nranks_; ++r) {
      char* slot = recv + (r * op.count + offset) * elt;
      if (r == rank_ && slot == send + offset * elt) continue;  // in place
      std::memmove(slot, r == rank_ ? send + offset * elt : world_.input(r, k),
                   n * elt);
    }
    postDone(k);
    postFreed(k);
  }
}

void HostCollectives::gather(const Op& op) {
  size_t elt = dtypeSize(op.dtype);
  size_t perRound = elementsPerBuffer(op);
  const char* send = static_cast<const char*>(op.sendbuff);
  char* recv = static_cast<char*>(op.recvbuff);
  for (size_t offset = 0; offset < op.count; offset += perRound) {
    size_t n = std::min(perRound, op.count - offset);
    uint64_t k = beginRound();
    guardInput(k);
    std::memcpy(world_.input(rank_, k), send + offset * elt, n * elt);
    postReady(k);
    if (rank_ == op.root) {
      waitAllReady(k);
      for (int r = 0; r < nranks_; ++r)
        std::memcpy(recv + (r * op.count + offset) * elt, world_.input(r, k),
                    n * elt);
    }
    postDone(k);
    postFreed(k);
  }
}

void HostCollectives::broadcast(const Op& op) {
  size_t elt = dtypeSize(op.dtype);
  size_t perRound = elementsPerBuffer(op);
  const char* send = static_cast<const char*>(op.sendbuff);
  char* recv = static_cast<char*>(op.recvbuff);
  bool isRoot = rank_ == op.root;
  for (size_t offset = 0; offset < op.count; offset += perRound) {
    size_t bytes = std::min(perRound, op.count - offset) * elt;
    uint64_t k = beginRound();
    if (isRoot) {
      guardInput(k);
      std::memcpy(world_.input(rank_, k), send + offset * elt, bytes);
      if (recv != send)
        std::memmove(recv + offset * elt, send + offset * elt, bytes);
    }
    postReady(k);
    if (!isRoot) {
      world_.waitFor(world_.ready(op.root), k, op.root, "broadcast data");
      std::memcpy(recv + offset * elt, world_.input(op.root, k), bytes);
    }
    postDone(k);
    postFreed(k);
  }
}

void HostCollectives::scatter(const Op& op) {
  size_t elt = dtypeSize(op.dtype);
  size_t perPiece = std::max<size_t>(1, elementsPerBuffer(op) / nranks_);
  const char* send = static_cast<const char*>(op.sendbuff);
  char* recv = static_cast<char*>(op.recvbuff);
  bool isRoot = rank_ == op.root;
  for (size_t offset = 0; offset < op.count; offset += perPiece) {
    size_t n = std::min(perPiece, op.count - offset);
    uint64_t k = beginRound();
    if (isRoot) {
      guardInput(k);
      char* staged = world_.input(rank_, k);
      for (int r = 0; r < nranks_; ++r)
        std::memcpy(staged + r * n * elt, send + (r * op.count + offset) * elt,
                    n * elt);
    }
    postReady(k);
    world_.waitFor(world_.ready(op.root), k, op.root, "scatter data");
    std::memcpy(recv + offset * elt, world_.input(op.root, k) + rank_ * n * elt,
                n * elt);
    postDone(k);
    postFreed(k);
  }
}

void HostCollectives::allToAll(const Op& op) {
  size_t elt = dtypeSize(op.dtype);
  size_t perPiece = std::max<size_t>(1, elementsPerBuffer(op) / nranks_);
  const char* send = static_cast<const char*>(op.sendbuff);
  char* recv = static_cast<char*>(op.recvbuff);
  for (size_t offset = 0; offset < op.count; offset += perPiece) {
    size_t n = std::min(perPiece, op.count - offset);
    uint64_t k = beginRound();
    guardInput(k);
    char* staged = world_.input(rank_, k);
    for (int r = 0; r < nranks_; ++r)
      std::memcpy(staged + r * n * elt, send + (r * op.count + offset) * elt,
                  n * elt);
    postReady(k);
    waitAllReady(k);
    for (int r = 0; r < nranks_; ++r)
      std::memcpy(recv + (r * op.count + offset) * elt,
                  world_.input(r, k) + rank_ * n * elt, n * elt);
    postDone(k);
    postFreed(k);
  }
}

}  // namespace hetccl
