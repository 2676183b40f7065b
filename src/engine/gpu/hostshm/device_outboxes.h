// The host memory through which GPU ranks of one host exchange data
// without a CPU thread: each rank has an outbox, a shared segment of pinned
// host memory that every rank maps and registers with its runtime. An
// outbox starts with flags (written and waited on by the GPUs' streams
// with stream memory operations) and holds kSlots chunk slots, used in
// turn by the chunks of the communicator's collectives. Behind them, for
// point-to-point transfers, each destination rank has a channel of its
// own: kSlots smaller slots, used in turn by the chunks sent from the
// outbox's owner to that rank.
//
// Between the flags and the slots, each outbox has the owner's line area
// for low-latency all-reduces (device_module.h), if the communicator
// takes them.
//
// Each slot has a flag per reader, which only the owner and that reader
// write, with fixed values: the owner waits until the flag says the slot
// is free, fills the slot and marks it filled; the reader waits until it
// is filled, reads it, and marks it free again. No flag holds a sequence
// number, so the work a launch enqueues can run again unchanged: a CUDA
// graph that captured it replays it any number of times, between other
// launches, as long as every rank runs the same operations in the same
// order (which NCCL asks of its callers anyway).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "op/call_signature.h"
#include "runtime/device/device_resources.h"
#include "shm/shm_segment.h"
#include "util/error.h"
#include "util/oob.h"

namespace hetccl {

class DeviceOutboxes {
 public:
  static constexpr uint64_t kSlots = 4;
  static constexpr size_t kFailureBytes = 512;

  // Collective over `oob`: every rank maps every rank's outbox. The line
  // areas carry low-latency all-reduces of up to `lowLatencyBytes`.
  DeviceOutboxes(Oob& oob, const DeviceModule& module, size_t slotBytes,
                 size_t pairSlotBytes, size_t lowLatencyBytes);
  ~DeviceOutboxes();
  DeviceOutboxes(const DeviceOutboxes&) = delete;
  DeviceOutboxes& operator=(const DeviceOutboxes&) = delete;

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  size_t slotBytes() const { return slotBytes_; }
  size_t pairSlotBytes() const { return pairSlotBytes_; }

  // Bits of a slot's flag. An all-reduce's owner sets kFilled | kResult
  // once its reduced shard is in the slot behind its contributions.
  static constexpr uint64_t kFree = 1;
  static constexpr uint64_t kFilled = 2;
  static constexpr uint64_t kResult = 4;
  // Set with the others when the waits are released: no stream writes
  // it, so a wait that sees it knows it was released, not satisfied (the
  // emulated device module fails such a wait).
  static constexpr uint64_t kReleasedBit = HETCCL_DEVICE_WAIT_RELEASED;

  // The slot of `owner`'s outbox that chunk `chunk` uses (chunk % kSlots),
  // and its flag for `reader`.
  char* slot(int owner, uint64_t chunk) const;
  uint64_t* slotFlag(int owner, uint64_t chunk, int reader) const;

  // The channel from `owner` to `destination` (different ranks): the slot
  // that chunk `chunk` of the pair's transfers uses, and its flag.
  char* pairSlot(int owner, int destination, uint64_t chunk) const;
  uint64_t* pairFlag(int owner, int destination, uint64_t chunk) const;

  // `owner`'s line area: two halves of lowLatencyHalfLines() lines.
  uint64_t* lowLatencyArea(int owner) const;
  size_t lowLatencyHalfLines() const { return lowLatencyHalfLines_; }
  // Nonzero once this rank released the waits, for whatever reason: ends
  // the waits of its low-latency kernels, which poll lines, not flags.
  const uint64_t* releaseWord() const;

  // What a rank publishes about itself in its outbox, read by the others'
  // watches (LaunchWatch): a failure is an error every rank must report
  // (with its code and message); a departure is clean only for the
  // launches the rank completed.
  void markFailed(ncclResult_t code, const std::string& why);
  // `rank`'s failure (its code is ncclSuccess if it has none).
  Error failureOf(int rank) const;
  // This rank leaves after completing `collectiveLaunches` launches that
  // held a collective (point-to-point launches are not counted: they
  // concern two ranks only).
  void markLeft(uint64_t collectiveLaunches);
  // The lowest rank that marked itself failed, or -1; the lowest that
  // found calls that disagree (ncclInvalidUsage) before any other: the
  // others' failures follow from it (they released their waits once they
  // learnt of it), and every rank must report the disagreement alike.
  int failedRank() const;

  // The calls each rank posted (CallAgreement): a ring of the last
  // kCallRing collectives' signatures per rank, the count of ranks that
  // posted each (in rank 0's outbox), and per rank the word its streams
  // wait on: the collectives every rank agreed on so far.
  static constexpr uint64_t kCallRing = 256;
  struct PostedCall {
    CallSignature call;
    uint64_t number;  // written last: call.sequence once `call` is there
  };
  PostedCall& postedCall(int owner, uint64_t number) const;
  uint64_t* arrivals(uint64_t number) const;
  uint64_t* agreedWord(int owner) const;

  // The sends and receives each rank posted (TransferAgreement), per peer
  // and direction (a lane): a ring of the lane's last kTransferRing
  // transfers' signatures in the owner's outbox, the word the owner's lane
  // waits on (the lane's transfers both ends agreed on so far), and, in the
  // sender's outbox, the count of ends that posted each transfer.
  static constexpr uint64_t kTransferRing = 256;
  enum Direction { kSending = 0, kReceiving = 1 };
  PostedCall& postedTransfer(int owner, int peer, Direction direction,
                             uint64_t number) const;
  uint64_t* transferAgreedWord(int owner, int peer, Direction direction) const;
  uint64_t* transferArrivals(int sender, int receiver, uint64_t number) const;
  // Whether `rank` left, and how many collective launches it completed.
  bool left(int rank) const;
  uint64_t collectivesCompletedBy(int rank) const;

  // Sets, with kReleasedBit, the bits this rank's own waits take, so that
  // its streams go on, with undefined results; the other ranks' waits
  // stay. Only this rank's abort, destroy, revoke or the process's exit
  // does that, never a failure alone: a stream must not run past an
  // operation that lost a peer. A thread keeps them set until the
  // outboxes go: a CUDA graph's replay writes its flags' fixed values
  // again, and must not block on them. Marks this rank failed first, so
  // that every other rank fails rather than trust what a released stream
  // wrote.
  void releaseWaits();

 private:
  size_t channelOffset(int owner, int destination) const;
  size_t slotsOffset() const;
  void raiseOwnWaits();
  void keepRaising();

  const int rank_;
  const int nranks_;
  const size_t slotBytes_;
  const size_t pairSlotBytes_;
  const size_t lowLatencyHalfLines_;
  std::vector<ShmSegment> segments_;  // every rank's outbox, by rank
  std::vector<std::unique_ptr<HostRegistration>> registrations_;
  std::mutex keeperMutex_;  // guards keeper_ and stopping_
  std::condition_variable stopKeeper_;
  bool stopping_ = false;
  std::thread keeper_;  // raises the flags again and again once released
};

}  // namespace hetccl
