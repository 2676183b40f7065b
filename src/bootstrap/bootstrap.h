// A rank's side of the bootstrap: joining a communicator through the root
// named by an ncclUniqueId, and the out-of-band exchanges among its ranks
// afterwards (allgather, barrier, broadcast, tagged send/recv).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "nccl.h"
#include "util/socket_address.h"

namespace hetccl {

class PeerMesh;

class Bootstrap {
 public:
  // Connects to the root of `id` as `rank` of `nranks`, presents the
  // secret, sends `peerInfo` (the same size on every rank), and returns
  // once every rank arrived, with everyone's peer info. For an id with a
  // fixed root (HETCCL_COMM_ID), rank 0 starts the root first.
  // Throws hetccl::Error: ncclInvalidArgument for bad arguments or a
  // corrupted id; ncclSystemError on timeout ("... rank(s) X,Y never
  // arrived" when the root knows) or abort; ncclRemoteError when the root
  // goes away; ncclInvalidUsage at once when a root that listened before
  // (ncclGetUniqueId's; the one rank 0 of a fixed id started) refuses the
  // connection: the id was used already; whatever the root refused the
  // rank with (wrong secret, duplicate rank, inconsistent nranks, more
  // than kMaxRanks). `timeoutSeconds` (0: never) also bounds every later
  // call, and the wait of the root that rank 0 starts.
  static std::unique_ptr<Bootstrap> init(const ncclUniqueId& id, int rank,
                                         int nranks, const void* peerInfo,
                                         size_t peerInfoBytes,
                                         const std::atomic<bool>* abortFlag,
                                         double timeoutSeconds);
  // Closes every connection. No call may be in progress: abort() and
  // join the callers first.
  ~Bootstrap();
  Bootstrap(const Bootstrap&) = delete;
  Bootstrap& operator=(const Bootstrap&) = delete;

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  size_t peerInfoBytes() const { return peerInfoBytes_; }
  // The all-gathered peer info payloads.
  const void* peerInfo(int rank) const;
  // Where `rank` accepts bootstrap connections.
  const SocketAddress& listenAddress(int rank) const;

  // Out-of-band exchanges over direct rank-to-rank TCP connections, made
  // on demand and cached. Tags keep concurrent exchanges apart; messages
  // that arrive for another (peer, tag) wait until asked for. All block
  // until done, the timeout, or an abort.
  void send(int peer, uint32_t tag, const void* data, size_t bytes);
  // The same, giving up (throwing) after `seconds`.
  void sendWithin(int peer, uint32_t tag, const void* data, size_t bytes,
                  double seconds);
  // Exactly `bytes` are expected; a size mismatch is ncclInternalError.
  void recv(int peer, uint32_t tag, void* data, size_t bytes);
  // A message with `tag` from any peer, if one has arrived (PeerMesh);
  // never waits.
  std::optional<std::pair<int, std::vector<uint8_t>>> tryRecvAny(uint32_t tag);
  // `data` holds nranks slots of bytesPerRank; this rank's slot is filled
  // on entry, all are on return. Ring algorithm.
  // If one of these collective exchanges fails on a rank, that rank tells
  // the others, whose calls with the same tag then fail at once.
  void allGather(void* data, size_t bytesPerRank, uint32_t tag);
  void barrier(uint32_t tag);
  // Binomial tree from `root`.
  void broadcast(void* data, size_t bytes, int root, uint32_t tag);

  // Runs `exchange`, this rank's part of the exchange `tag` among `peers`
  // (every rank if empty). If it throws, the peers still waiting in that
  // exchange are told (unless one of them gave it up first) and fail at
  // once instead of waiting out the timeout; then the error goes on.
  template <typename Exchange>
  void runExchange(uint32_t tag, const std::vector<int>& peers,
                   Exchange exchange) {
    try {
      exchange();
    } catch (const std::exception& e) {
      tellAbandoned(tag, peers, e.what());
      throw;
    }
  }

  // Makes every blocked call (in any thread) throw promptly; for
  // ncclCommAbort. Later calls throw at once.
  void abort();

  // (peer rank, fd) of each open rank-to-rank connection. Poll them with
  // events = POLLRDHUP: POLLRDHUP, POLLHUP or POLLERR means that peer's
  // process went away (or closed its bootstrap). May be empty.
  std::vector<std::pair<int, int>> peerConnectionFds() const;
  // Incoming rank-to-rank connections held (peers, and strangers not yet
  // dropped): rejected strangers must not pile up.
  size_t incomingConnectionsHeld() const;

 private:
  Bootstrap(int rank, int nranks, size_t peerInfoBytes);
  void tellAbandoned(uint32_t tag, const std::vector<int>& peers,
                     const char* why);

  int rank_;
  int nranks_;
  size_t peerInfoBytes_;
  std::vector<uint8_t> peerInfo_;  // nranks_ * peerInfoBytes_
  std::vector<SocketAddress> addresses_;
  std::unique_ptr<PeerMesh> mesh_;
};

}  // namespace hetccl
