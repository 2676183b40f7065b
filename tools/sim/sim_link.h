// The links of simulated ranks: HetCCL's Link interface over the simulated
// network. Transfers between two ranks are matched in the order each side
// posts them, as on every real link; a matched pair takes its time on the
// network (network.h) and completes both requests then. No byte moves:
// the plans' buffers are never read.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "engine/gpu/proxy/slot_sizes.h"
#include "network.h"
#include "scheduler.h"
#include "sim_stream.h"
#include "transport/link.h"

namespace hetccl::sim {

class SimRequest : public TransferRequest,
                   public std::enable_shared_from_this<SimRequest> {
 public:
  // `stream`: a GPU rank's, where waits for the transfer run; null for a
  // CPU rank.
  SimRequest(Scheduler& scheduler, int peer, TransferWay way, size_t bytes,
             SimStream* stream = nullptr)
      : scheduler_(scheduler),
        peer_(peer),
        way_(way),
        bytes_(bytes),
        stream_(stream) {}

  bool done() override { return complete_; }
  // Waits in virtual time, or has the stream wait; the simulation has no
  // timeouts or aborts.
  void wait(const AbortSignal& abort, double timeoutSeconds) override;
  int peer() const override { return peer_; }
  TransferWay way() const override { return way_; }
  size_t bytes() const { return bytes_; }
  // The transfer arrived: wakes the rank that waits for it.
  void complete();

 private:
  void waitHere();

  Scheduler& scheduler_;
  const int peer_;
  const TransferWay way_;
  const size_t bytes_;
  SimStream* const stream_;
  bool complete_ = false;
  int waiter_ = -1;
};

// Every rank's posted transfers, matched pair by pair.
class Wires {
 public:
  Wires(Scheduler& scheduler, Network& network, int nranks)
      : scheduler_(scheduler), network_(network), sent_(nranks, 0) {}

  // `stream`: a GPU rank's, where the transfer is waited for; a receive is
  // posted at once (the engine's proxy takes pieces in as they come), a
  // send once the stream reaches it (its data is ready then). Null: a CPU
  // rank's, posted at once and waited for where the plan waits.
  std::shared_ptr<SimRequest> post(int self, int peer, TransferWay way,
                                   size_t bytes, SimStream* stream = nullptr);
  // Transfers `rank` has sent.
  size_t messagesSent(int rank) const { return sent_[rank]; }

 private:
  struct Queue {
    std::deque<std::shared_ptr<SimRequest>> sends, receives;
  };
  void post(int self, const std::shared_ptr<SimRequest>& request);
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

class SimLink : public Link {
 public:
  // `largestPiece`: of a GPU rank's staged pieces; 0 for a CPU rank.
  // `stream`: a GPU rank's, null for a CPU rank.
  SimLink(Wires& wires, int self, int peer, size_t largestPiece,
          SimStream* stream)
      : wires_(wires), self_(self), peer_(peer), stream_(stream) {
    if (largestPiece > 0) staging_.emplace(largestPiece);
  }
  // What its staging rings would pin (0 for a CPU rank).
  size_t pinnedBytes() const { return staging_ ? staging_->pinnedBytes() : 0; }

  int peer() const override { return peer_; }
  std::shared_ptr<TransferRequest> send(const void* data, size_t bytes,
                                        const CallSignature& call) override;
  std::shared_ptr<TransferRequest> recv(void* data, size_t bytes,
                                        const CallSignature& call) override;
  size_t bytesSent() const override { return sent_; }
  size_t bytesReceived() const override { return received_; }

 private:
  Wires& wires_;
  const int self_;
  const int peer_;
  SimStream* const stream_;
  std::optional<StagingCount> staging_;
  size_t sent_ = 0;
  size_t received_ = 0;
};

}  // namespace hetccl::sim
