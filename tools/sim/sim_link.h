// The links of simulated ranks: HetCCL's Link interface over the simulated
// network. Transfers between two ranks are matched in the order each side
// posts them, as on every real link; a matched pair takes its time on the
// network (network.h) and completes both requests then. No byte moves:
// the plans' buffers are never read.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "engine/gpu/proxy/slot_sizes.h"
#include "engine/gpu/proxy/unchanged_inputs.h"
#include "network.h"
#include "scheduler.h"
#include "sim_stream.h"
#include "staging_rings.h"
#include "transport/link.h"

namespace hetccl::sim {

class SimRequest : public TransferRequest,
                   public std::enable_shared_from_this<SimRequest> {
 public:
  // `stream`: a GPU rank's, where waits for the transfer run; null for a
  // CPU rank.
  // `staged`: its side copies it through host memory (network.h).
  SimRequest(Scheduler& scheduler, int peer, TransferWay way, size_t bytes,
             SimStream* stream = nullptr, bool staged = false)
      : scheduler_(scheduler),
        peer_(peer),
        way_(way),
        bytes_(bytes),
        stream_(stream),
        staged_(staged) {}

  // Arrived; or, for a staged send, posted: its bytes are in the staging
  // ring then and the plan may reuse its buffer.
  bool done() override {
    return complete_ || (posted_ && staged_ && way_ == TransferWay::kSend);
  }
  // Waits in virtual time, or has the stream wait; the simulation has no
  // timeouts or aborts.
  void wait(const AbortSignal& abort, double timeoutSeconds) override;
  int peer() const override { return peer_; }
  TransferWay way() const override { return way_; }
  size_t bytes() const { return bytes_; }
  bool staged() const { return staged_; }
  // The transfer was posted on the wire (Wires::post).
  void posted();
  // The transfer arrived: wakes the rank that waits for it, then runs
  // what was to follow it.
  void complete();
  // Runs `then` once the transfer has arrived (before complete() returns).
  void whenComplete(std::function<void()> then) { then_ = std::move(then); }
  // From a fiber: waits until done().
  void waitHere();
  // A staged receive: the stream waits for it as its ring's `index`-th
  // (ReceiveRing::consumeThrough).
  void waitThrough(ReceiveRing* ring, uint64_t index) {
    ring_ = ring;
    ringIndex_ = index;
  }

 private:
  Scheduler& scheduler_;
  const int peer_;
  const TransferWay way_;
  const size_t bytes_;
  SimStream* const stream_;
  const bool staged_;
  bool posted_ = false;
  bool complete_ = false;
  int waiter_ = -1;
  std::function<void()> then_;
  ReceiveRing* ring_ = nullptr;
  uint64_t ringIndex_ = 0;
};

// Every rank's posted transfers, matched pair by pair.
class Wires {
 public:
  Wires(Scheduler& scheduler, Network& network, int nranks)
      : scheduler_(scheduler), network_(network), sent_(nranks, 0) {}

  // A transfer, not yet posted. `stream`: a GPU rank's, where it is
  // waited for; null: waited for where the caller waits. `staged`: this
  // side copies it through host memory.
  std::shared_ptr<SimRequest> request(int self, int peer, TransferWay way,
                                      size_t bytes, SimStream* stream = nullptr,
                                      bool staged = false);
  // Posts `request`, a transfer of rank `self`: it is matched with the
  // peer's as soon as both are posted.
  void post(int self, const std::shared_ptr<SimRequest>& request);
  // Both at once.
  std::shared_ptr<SimRequest> post(int self, int peer, TransferWay way,
                                   size_t bytes) {
    auto posted = request(self, peer, way, bytes);
    post(self, posted);
    return posted;
  }
  // Transfers `rank` has sent.
  size_t messagesSent(int rank) const { return sent_[rank]; }

 private:
  struct Queue {
    std::deque<std::shared_ptr<SimRequest>> sends, receives;
  };
  void match(int src, int dst, Queue& queue);

  Scheduler& scheduler_;
  Network& network_;
  std::map<std::pair<int, int>, Queue> queues_;  // by (sender, receiver)
  std::vector<size_t> sent_;
};

// A GPU rank's side of a link stages its pieces (algo/pieced_link.h) in
// pinned rings whose slots grow to the largest piece they took
// (engine/gpu/proxy/slot_sizes.h); the link counts what they would pin.
class StagingCount {
 public:
  explicit StagingCount(size_t largestPiece)
      : largest_(largestPiece),
        sends_(largestPiece, kStagingRingSlots),
        receives_(largestPiece, kStagingRingSlots) {}
  void add(TransferWay way, size_t bytes);
  size_t pinnedBytes() const {
    return sends_.pinnedBytes() + receives_.pinnedBytes();
  }

 private:
  const size_t largest_;
  SlotSizes sends_, receives_;
};

// What a GPU rank's links share (null for a CPU rank's): the engine's
// stream, where the plan's work and its waits for transfers run; the up
// stream, where the staging copies out of the GPU run one after another
// for every link; and the inputs the running plan only reads.
struct GpuSide {
  SimStream* stream = nullptr;
  SimStream* up = nullptr;
  const UnchangedInputs* unchangedInputs = nullptr;
  size_t largestPiece = 0;  // of the staged pieces (crossDomainPieceBytes)
};

// A rank's link to one peer. A CPU rank posts its transfers at once and
// waits where the plan waits. A GPU rank's transfers run as its engine
// runs them (engine/gpu/proxy/staged_link.h), to a peer of another host
// through its staging rings:
//   send: the up stream takes it after the plan's start (an input the
//         plan only reads) or after what the engine's stream had been
//         given by then, waits there for a free slot of the link's
//         send ring and posts it: the engine's stream waits for it only
//         that long (its bytes are copied out), and the slot is free
//         again once it has arrived. So sends of later rounds run ahead
//         of the engine's stream, as far as the ring allows.
//   recv: posted once the link's receive ring has a free slot, which it
//         gives back when the engine's stream has waited for it: the
//         stream's wait for one receive is its wait for every receive
//         posted before it on the link (the ring's counter).
// To a peer of its own host the transfer is not staged: a send is posted
// when the engine's stream reaches it, a receive at once.
class SimLink : public Link {
 public:
  // `gpu`: null for a CPU rank. `staged`: the peer is on another host.
  SimLink(Scheduler& scheduler, Wires& wires, int self, int peer,
          const GpuSide* gpu, bool staged);
  // What its staging rings would pin (0 for a CPU rank).
  size_t pinnedBytes() const { return staging_ ? staging_->pinnedBytes() : 0; }

  int peer() const override { return peer_; }
  std::shared_ptr<TransferRequest> send(const void* data, size_t bytes,
                                        const CallSignature& call,
                                        TransferPiece piece = {}) override;
  std::shared_ptr<TransferRequest> recv(void* data, size_t bytes,
                                        const CallSignature& call,
                                        TransferPiece piece = {}) override;
  size_t bytesSent() const override { return sent_; }
  size_t bytesReceived() const override { return received_; }

 private:
  std::shared_ptr<TransferRequest> stagedSend(const void* data, size_t bytes);
  std::shared_ptr<TransferRequest> stagedRecv(size_t bytes);
  size_t piecesOf(size_t bytes) const;

  Wires& wires_;
  const int self_;
  const int peer_;
  const GpuSide* const gpu_;
  const bool staged_;
  std::optional<StagingCount> staging_;
  std::optional<SendRing> sends_;
  std::optional<ReceiveRing> receives_;
  size_t sent_ = 0;
  size_t received_ = 0;
};

}  // namespace hetccl::sim
