// Point-to-point transfers of a group. Every ordered pair of ranks has a
// two-slot mailbox in the sender's segment; a message is cut into chunks of
// one slot. All of a group's transfers progress together, so a group
// completes whatever order the peers posted their sends and receives in;
// transfers to one peer stay in posting order, as NCCL matches them. Each
// chunk's slot names the call of its message, which the receiver compares
// with its own at the message's first chunk.
#include <algorithm>
#include <cstring>
#include <deque>

#include "domain/host/host_collectives.h"
#include "op/op_traits.h"
#include "util/dtype.h"
#include "util/error.h"

namespace hetccl {
namespace {

struct Transfer {
  char* buffer;
  size_t bytes;
  CallSignature call;
  size_t moved = 0;
};

// Sends to self are matched with receives from self in order.
void copyToSelf(std::deque<Transfer>& sends, std::deque<Transfer>& recvs) {
  if (sends.size() != recvs.size())
    fail(ncclInvalidUsage,
         "a group posted %zu send(s) to self but %zu receive(s) from self",
         sends.size(), recvs.size());
  for (size_t i = 0; i < sends.size(); ++i) {
    if (sends[i].bytes != recvs[i].bytes)
      fail(ncclInvalidUsage,
           "send to self of %zu bytes matched with a receive of %zu bytes",
           sends[i].bytes, recvs[i].bytes);
    if (recvs[i].buffer != sends[i].buffer)
      std::memmove(recvs[i].buffer, sends[i].buffer, sends[i].bytes);
  }
  sends.clear();
  recvs.clear();
}

}  // namespace

void HostCollectives::sendRecv(const std::vector<const Op*>& ops) {
  std::vector<std::deque<Transfer>> sends(nranks_), recvs(nranks_);
  for (const Op* op : ops) {
    size_t bytes = op->count * dtypeSize(op->dtype);
    if (bytes == 0) continue;
    if (op->kind == OpKind::Send)
      sends[op->root].push_back(
          {const_cast<char*>(static_cast<const char*>(op->sendbuff)), bytes,
           signatureOf(*op)});
    else
      recvs[op->root].push_back(
          {static_cast<char*>(op->recvbuff), bytes, signatureOf(*op)});
  }
  copyToSelf(sends[rank_], recvs[rank_]);
  // Locks in one global order (sends by peer, then receives by peer), so
  // that batches on different streams never wait for each other in a
  // cycle.
  std::vector<std::unique_lock<std::mutex>> held;
  for (int peer = 0; peer < nranks_; ++peer)
    if (!sends[peer].empty()) held.emplace_back(sendLocks_[peer]);
  for (int peer = 0; peer < nranks_; ++peer)
    if (!recvs[peer].empty()) held.emplace_back(receiveLocks_[peer]);

  const size_t slot = world_.settings().p2pChunkBytes;
  auto pending = [&] {
    for (int r = 0; r < nranks_; ++r)
      if (!sends[r].empty() || !recvs[r].empty()) return true;
    return false;
  };
  // A slot is free once the peer consumed the chunk sent two before.
  auto canSend = [&](int peer) {
    uint64_t chunk = sentChunks_[peer];
    return !sends[peer].empty() &&
           (chunk < 2 ||
            ShmWorld::reached(world_.consumed(peer, rank_), chunk - 1));
  };
  // At a message's first chunk: the sender's call against the receive's.
  auto checkCall = [&](int peer, const Transfer& receive) {
    const CallSignature sent =
        world_.p2pCall(peer, rank_, receivedChunks_[peer]);
    if (!callsAgree(sent, receive.call))
      world_.board().disagree(peer, sent, rank_, receive.call);
  };
  auto canReceive = [&](int peer) {
    return !recvs[peer].empty() && ShmWorld::reached(world_.sent(peer, rank_),
                                                     receivedChunks_[peer] + 1);
  };
  while (pending()) {
    bool progressed = false;
    for (int peer = 0; peer < nranks_; ++peer) {
      if (canSend(peer)) {
        Transfer& t = sends[peer].front();
        size_t n = std::min(slot, t.bytes - t.moved);
        std::memcpy(world_.p2pSlot(rank_, peer, sentChunks_[peer]),
                    t.buffer + t.moved, n);
        world_.p2pCall(rank_, peer, sentChunks_[peer]) = t.call;
        t.moved += n;
        ShmWorld::post(world_.sent(rank_, peer), ++sentChunks_[peer]);
        if (t.moved == t.bytes) sends[peer].pop_front();
        progressed = true;
      }
      if (canReceive(peer)) {
        Transfer& t = recvs[peer].front();
        if (t.moved == 0) checkCall(peer, t);
        size_t n = std::min(slot, t.bytes - t.moved);
        std::memcpy(t.buffer + t.moved,
                    world_.p2pSlot(peer, rank_, receivedChunks_[peer]), n);
        t.moved += n;
        ShmWorld::post(world_.consumed(rank_, peer), ++receivedChunks_[peer]);
        if (t.moved == t.bytes) recvs[peer].pop_front();
        progressed = true;
      }
    }
    if (progressed) continue;
    // Nothing moved: back off until something can. The wait is marked
    // for the one peer left, or for several (-1).
    int waitedFor = -1;
    for (int peer = 0; peer < nranks_; ++peer)
      if (!sends[peer].empty() || !recvs[peer].empty())
        waitedFor = waitedFor == -1 ? peer : -2;
    WaitScope marked =
        world_.markP2pWait(waitedFor, "matching send or receive");
    SpinWait wait = world_.makeWait("a matching send or receive", -1);
    auto anyReady = [&] {
      for (int peer = 0; peer < nranks_; ++peer)
        if (canSend(peer) || canReceive(peer)) return true;
      return false;
    };
    while (!anyReady()) {
      for (int peer = 0; peer < nranks_; ++peer)
        if (!sends[peer].empty() || !recvs[peer].empty()) wait.checkPeer(peer);
      world_.pause(wait);
      world_.board().checkReports();
    }
  }
}

}  // namespace hetccl
