// The slots of a staging ring (engine/gpu/proxy/staging_ring.h) as a
// bound on the transfers a GPU rank's link has in flight one way. On the
// real engine a piece needs a free slot to start: a send's copy out of
// the GPU waits on the up stream for the proxy to have sent the piece a
// ring before it, and the proxy receives a piece only into a slot that
// the down stream has emptied. A simulated transfer is not cut into its
// pieces (the network model pipelines them, network.h), so it starts once
// one slot is free, as its first piece would, and then holds as many
// slots as it has pieces, up to the ring: never later than the real
// engine would start it.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>

#include "scheduler.h"

namespace hetccl::sim {

class SlotBound {
 public:
  SlotBound(Scheduler& scheduler, size_t slots)
      : scheduler_(scheduler), slots_(slots) {}

  // The slots a transfer of `pieces` pieces holds.
  size_t slotsFor(size_t pieces) const;
  // From a fiber (a GPU rank's up stream): waits until a slot is free,
  // then takes `n`.
  void take(size_t n);
  // Runs `start` once a slot is free and those queued before it have
  // started, taking `n`: now, if one is.
  void takeWhenFree(size_t n, std::function<void()> start);
  // A transfer gave its `n` slots back: starts what waits for them.
  void give(size_t n);

 private:
  bool full() const { return used_ >= slots_; }
  void startQueued();

  struct Queued {
    size_t n;
    std::function<void()> start;
  };

  Scheduler& scheduler_;
  const size_t slots_;
  size_t used_ = 0;
  std::deque<Queued> queued_;
  int waiter_ = -1;  // the fiber suspended in take()
};

}  // namespace hetccl::sim
