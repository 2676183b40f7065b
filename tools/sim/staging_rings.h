// The staging rings of a simulated GPU rank's link to another host
// (engine/gpu/proxy/staging_ring.h): their slots bound what each way of
// the link has in flight. On the real engine a piece needs a free slot to
// start: a send's copy out of the GPU waits on the up stream for the
// proxy to have sent the piece a ring before it, and the proxy receives a
// piece only into a slot that the down stream has emptied, which it does
// where the plan waits for the piece. A simulated transfer is not cut into
// its pieces (the network model pipelines them, network.h), so it starts
// once one slot is free, as its first piece would, and then holds as many
// slots as it has pieces, up to the ring: never later than the real
// engine would start it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <utility>

#include "scheduler.h"

namespace hetccl::sim {

class SimRequest;
class Wires;

// The slots a transfer of `pieces` pieces holds.
size_t ringSlotsFor(size_t pieces);

// A send ring: the up stream takes slots, a transfer's arrival gives them
// back.
class SendRing {
 public:
  explicit SendRing(Scheduler& scheduler) : scheduler_(scheduler) {}
  // From the up stream's fiber: waits until a slot is free, then takes
  // `n`.
  void take(size_t n);
  void give(size_t n);

 private:
  Scheduler& scheduler_;
  size_t used_ = 0;
  int waiter_ = -1;  // the fiber suspended in take()
};

// A receive ring: receives are posted in order as slots free up; the
// engine's stream gives them back as it waits for them, and its wait for
// one receive is its wait for every receive posted before it (the ring's
// counter).
class ReceiveRing {
 public:
  ReceiveRing(Wires& wires, int self) : wires_(wires), self_(self) {}
  // Rank `self`'s receive of `pieces` pieces, posted once a slot is free
  // and those added before it are posted; returns its index on the ring.
  uint64_t add(std::shared_ptr<SimRequest> request, size_t pieces);
  // From the engine's stream: waits for the receives through the
  // `index`-th, and gives their slots back.
  void consumeThrough(uint64_t index);

 private:
  void postWhileFree();

  Wires& wires_;
  const int self_;
  // Receives the stream has not waited for, with the slots each takes:
  // the first is the `consumed_`-th; those from the `posted_`-th on wait
  // for a slot.
  std::deque<std::pair<std::shared_ptr<SimRequest>, size_t>> unconsumed_;
  uint64_t consumed_ = 0;
  uint64_t posted_ = 0;
  size_t used_ = 0;
};

}  // namespace hetccl::sim
