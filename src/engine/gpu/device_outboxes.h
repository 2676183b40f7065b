// The host memory through which GPU ranks of one host exchange data
// without a CPU thread: each rank has an outbox, a shared segment of pinned
// host memory that every rank maps and registers with its runtime. An
// outbox starts with counters (written and waited on by the GPUs' streams
// with stream memory operations) and holds kSlots chunk slots, used in
// turn by the chunks of the communicator's sequence of collectives. Behind
// them, for point-to-point transfers, each destination rank has a channel
// of its own: kSlots smaller slots, used in turn by the chunks sent from
// the outbox's owner to that rank (a sequence per pair of ranks, since
// only the two of them take part).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/device/device_resources.h"
#include "transport/shm/shm_segment.h"
#include "util/oob.h"

namespace hetccl {

class DeviceOutboxes {
 public:
  static constexpr uint64_t kSlots = 4;

  // Collective over `oob`: every rank maps every rank's outbox.
  DeviceOutboxes(Oob& oob, const DeviceModule& module, size_t slotBytes,
                 size_t pairSlotBytes);

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  size_t slotBytes() const { return slotBytes_; }
  size_t pairSlotBytes() const { return pairSlotBytes_; }

  // The slot of `owner`'s outbox that chunk `chunk` of the sequence uses.
  char* slot(int owner, uint64_t chunk) const;
  // Counters of `owner`'s outbox, each counting chunks of the sequence:
  // its own chunk data is in the slot (staged), its reduced shard is
  // (reduced), `reader` is done with the slot (consumed).
  uint64_t* staged(int owner) const;
  uint64_t* reduced(int owner) const;
  uint64_t* consumed(int owner, int reader) const;

  // The channel from `owner` to `destination` (different ranks): the slot
  // that chunk `chunk` of the pair's sequence uses, and counters of chunks
  // the owner has put in the channel (sent) and the destination has taken
  // out (taken).
  char* pairSlot(int owner, int destination, uint64_t chunk) const;
  uint64_t* sent(int owner, int destination) const;
  uint64_t* taken(int owner, int destination) const;

  // Sets every counter to its maximum, so that every stream waiting on
  // one goes on: the communicator has failed (`failure`; results are
  // undefined) or this rank is going away (its last operations are done,
  // and it leaves nothing for anyone to wait for).
  void releaseWaits(bool failure);
  // Whether some rank released the waits on a failure: then the streams of
  // every rank ran on without their peers, and every rank must fail.
  bool failed() const;

 private:
  struct Counters;
  Counters& counters(int owner) const;
  size_t channelOffset(int owner, int destination) const;

  const int rank_;
  const int nranks_;
  const size_t slotBytes_;
  const size_t pairSlotBytes_;
  std::vector<ShmSegment> segments_;  // every rank's outbox, by rank
  std::vector<std::unique_ptr<HostRegistration>> registrations_;
};

}  // namespace hetccl
