// All-reduce among GPU ranks of one host, driven entirely by their streams
// (no CPU thread on the data path). Each rank has an outbox: a shared
// segment of pinned host memory that every rank maps and registers with its
// runtime. Per chunk, a rank copies the parts of its input that other ranks
// own into its outbox; the owner of each shard copies those parts to its
// GPU, reduces them there in rank order (so every rank gets the same bits)
// and puts the result in its outbox, from where every rank copies it into
// its output. Streams signal each other with stream memory operations on
// counters in the outboxes.
//
// Two streams of HetCCL's own carry the work, so that copies to the host
// (`up`) and from it (`down`) run at the same time, one chunk apart:
//   up:   contributions of chunk c, then result of chunk c-1
//   down: reduction of chunk c, then gather of chunk c-1
// Each outbox holds kSlots chunks; a slot is rewritten only after every
// rank has read it (its `consumed` counter), which the one-chunk lag keeps
// free of deadlock as long as kSlots >= 2.
#pragma once

#include <memory>
#include <vector>

#include "runtime/device/device_resources.h"
#include "transport/shm/shm_segment.h"
#include "util/oob.h"
#include "vendor/op.h"

namespace hetccl {

class DeviceShmAllReduce {
 public:
  // Collective over `oob`: every rank of the communicator, all GPU ranks
  // of this host, constructs it at the same time. Up to `chunkBytes` of
  // input move per pipeline step (less for small ops: see chunkElements).
  DeviceShmAllReduce(Oob& oob, const DeviceModule& module, size_t chunkBytes);
  ~DeviceShmAllReduce();

  // Whether this path runs `ops` (the same answer on every rank).
  bool handles(const std::vector<Op>& ops) const;
  // Enqueues the all-reduce after the work on `stream`; work enqueued on
  // it later runs after the all-reduce.
  void launch(const Op& op, void* stream);
  // Lets every stream waiting on a counter go on (the communicator has
  // failed; results are undefined).
  void releaseWaits();

 private:
  struct Outbox;
  struct Chunk;

  void mapOutboxes(Oob& oob);
  Outbox& outbox(int rank) const;
  char* slot(int rank, uint64_t chunk) const;
  size_t chunkElements(const Op& op) const;
  Chunk chunkAt(const Op& op, uint64_t index) const;
  void sendContributions(const Op& op, const Chunk& chunk);
  void reduceOwnShard(const Op& op, const Chunk& chunk);
  void publishResult(const Op& op, const Chunk& chunk);
  void gatherResults(const Op& op, const Chunk& chunk);

  static constexpr uint64_t kSlots = 4;

  const DeviceModule& module_;
  const int rank_;
  const int nranks_;
  const size_t chunkBytes_;
  const size_t slotBytes_;
  std::vector<ShmSegment> segments_;  // every rank's outbox, by rank
  std::vector<std::unique_ptr<HostRegistration>> registrations_;
  std::unique_ptr<DeviceMemory> scratch_;  // other ranks' parts of a shard
  size_t scratchStride_;
  DeviceStream up_;
  DeviceStream down_;
  DeviceEvent start_;
  DeviceEvent upDone_;
  DeviceEvent downDone_;
  std::vector<std::unique_ptr<DeviceEvent>> reduced_;  // by slot
  uint64_t chunksLaunched_ = 0;  // the same count on every rank
};

}  // namespace hetccl
