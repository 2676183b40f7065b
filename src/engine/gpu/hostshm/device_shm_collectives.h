// Collectives among GPU ranks of one host driven entirely by their streams
// (no CPU thread on the data path), through the ranks' outboxes in pinned
// host memory (DeviceOutboxes). Per chunk, a rank copies what the others
// need from its input into its outbox, and takes what it needs from theirs;
// streams signal each other with stream memory operations on the outbox
// counters.
//   all-reduce      each rank owns a shard of the chunk: the others' parts of
//                   it come to its GPU and are reduced there in rank order
//                   (the same bits on every rank), then every rank gathers
//                   every reduced shard
//   reduce-scatter  the first half of that, the shards being the outputs
//   all-gather      every input goes to the outbox, from there to every
//   broadcast       output (the root's only, for broadcast)
//   all-to-all      the part for each peer goes to the outbox; each rank
//                   takes its part from every outbox
//   reduce          the other ranks' inputs go to their outboxes; the root
//                   reduces them with its own in rank order
//   gather          the other ranks' inputs go to their outboxes, from
//                   there to the root's output
//   scatter         the root's part for each peer goes to its outbox
//   send/receive    through the outboxes' channels (DeviceShmPointToPoint)
// An all-reduce, reduce-scatter, all-gather or broadcast whose larger
// buffer holds at most HETCCL_GPU_LL_MAX bytes is one kernel on the
// caller's stream instead (the device module's low-latency collectives:
// data and flags in the same stores to the outboxes' line areas).
//
// Two streams of HetCCL's own carry the work, so that copies to the host
// (`up`) and from it (`down`, with the reductions) run at the same time.
// A slot is refilled only after every rank that reads it has marked it
// free again (the outboxes' flags, which hold no sequence number: the
// enqueued work can be captured in a CUDA graph and replayed).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/gpu/hostshm/device_outboxes.h"
#include "engine/gpu/hostshm/device_shm_point_to_point.h"
#include "op/op.h"
#include "runtime/device/device_resources.h"
#include "util/oob.h"

namespace hetccl {

class DeviceShmCollectives {
 public:
  // Collective over `oob`: every rank of the communicator, all GPU ranks
  // of this host, constructs it at the same time. Up to `chunkBytes` of
  // input move per pipeline step (less for small ops: see stepElements).
  // Collectives of at most `lowLatencyMaxBytes` take the low-latency
  // kernel (0: none). Both must be the same on every rank (the
  // communicator's init checks HETCCL_GPU_CHUNK and HETCCL_GPU_LL_MAX).
  DeviceShmCollectives(Oob& oob, const DeviceModule& module, size_t chunkBytes,
                       size_t lowLatencyMaxBytes);
  ~DeviceShmCollectives();

  // Whether this path runs the collective of `ops` (the same answer on
  // every rank): a single collective other than a reduction by a scalar
  // in device memory. Sends and receives always take this path.
  bool handles(const std::vector<Op>& ops) const;
  // Enqueues the collective after the work on `stream` (`capturing`: into
  // a CUDA graph); work enqueued on it later runs after the collective.
  // Unless every rank's call is known to agree already (`agreed`), the
  // pipelined path reads nothing of another rank's before the outboxes'
  // agreement word reaches the op's number (CallAgreement); the
  // low-latency kernel needs no such wait (runLowLatency says why).
  void launch(const Op& op, void* stream, bool capturing, bool agreed);
  // The same for a group of sends and receives; each of its lanes waits
  // for the agreement `waits` names (TransferAgreement).
  void launchPointToPoint(const std::vector<Op>& ops, void* stream,
                          const LaneWaits& waits) {
    pointToPoint_.launch(ops, stream, waits);
  }
  // For the decision log: which path takes the collective of `ops` (those
  // of one launch) and why.
  std::string describeChoice(const std::vector<Op>& ops) const;
  // The outboxes' marks and release (DeviceOutboxes).
  DeviceOutboxes& outboxes() { return outboxes_; }
  const DeviceOutboxes& outboxes() const { return outboxes_; }

 private:
  // One pipeline step: elements [first, first + length) of each rank's
  // part of the buffers.
  struct Chunk {
    uint64_t index;  // in the communicator's sequence of chunks
    size_t first;
    size_t length;
    size_t elementBytes;

    size_t offset() const { return first * elementBytes; }
    size_t bytes() const { return length * elementBytes; }
  };
  template <typename Step>
  void forEachChunk(const Op& op, Step step);
  // The most input a step of `kind` moves: a chunk, or a rank's share of
  // one where each peer's part needs a place of its own in a slot.
  size_t maxStepBytes(OpKind kind) const;
  size_t stepElements(const Op& op) const;
  Chunk chunkAt(const Op& op, size_t stepElements, uint64_t index) const;
  size_t shardBegin(const Chunk& chunk, int rank) const;
  size_t shardLength(const Chunk& chunk, int rank) const;

  // What bounds a rank's posts in the low-latency kernel.
  size_t largerBufferBytes(const Op& op) const;
  bool takesLowLatencyKernel(const Op& op) const;
  std::string whyNotLowLatency(const Op& op) const;
  std::string describePipelined(const Op& op) const;
  void launchLowLatency(const Op& op, void* stream, bool capturing);
  void allReduce(const Op& op);
  void sendContributions(const Op& op, const Chunk& chunk);
  void reduceOwnShard(const Op& op, const Chunk& chunk);
  void publishResult(const Op& op, const Chunk& chunk);
  void gatherResults(const Op& op, const Chunk& chunk);
  void stageInput(const Op& op, const Chunk& chunk);
  void stagePeerParts(const Op& op, const Chunk& chunk);
  void copyOwnPart(const void* from, void* to, const Chunk& chunk);
  void takePart(int owner, size_t slotOffset, void* to, const Chunk& chunk);
  void reduceScatter(const Op& op);
  void allGather(const Op& op);
  void broadcast(const Op& op);
  void allToAll(const Op& op);
  void reduceToRoot(const Op& op);
  void gather(const Op& op);
  void scatter(const Op& op);

  // Stream steps. A copy of no bytes enqueues nothing.
  void copy(void* stream, void* to, const void* from, size_t bytes,
            const char* what);
  // Waits until the flag has one of `bits`; sets it to `value`.
  void waitFor(void* stream, const uint64_t* flag, uint64_t bits,
               const char* what);
  void setFlag(void* stream, uint64_t* flag, uint64_t value, const char* what);
  void reduce(const Op& op, void* to, const void* const* sources,
              size_t length);
  // up: every other rank has read what this rank's slot of `chunk` held
  // before; then the slot is marked `bits` for each rank that reads it in
  // `op`.
  void waitForFreeSlot(const Chunk& chunk);
  void markSlot(const Op& op, const Chunk& chunk, uint64_t bits,
                const char* what);
  // down: this rank is done with the slots of `chunk` it read in `op`.
  void releaseSlots(const Op& op, const Chunk& chunk);
  // What the other ranks' parts of a chunk occupy in a slot, each.
  size_t partsStepBytes() const;

  const DeviceModule& module_;
  DeviceOutboxes outboxes_;
  const int rank_;
  const int nranks_;
  const size_t chunkBytes_;
  std::unique_ptr<DeviceMemory> scratch_;  // other ranks' parts of a shard
  size_t scratchStride_;
  DeviceStream up_;
  DeviceStream down_;
  DeviceEvent start_;
  DeviceEvent upDone_;
  DeviceEvent downDone_;
  DeviceEvent ownPartsStaged_;  // all-to-all: before outputs overwrite inputs
  std::vector<std::unique_ptr<DeviceEvent>> reduced_;  // by slot
  // The same count on every rank; picks the slots a launch's chunks use.
  uint64_t chunksLaunched_ = 0;
  const size_t lowLatencyAsked_;  // HETCCL_GPU_LL_MAX
  const size_t lowLatencyMaxBytes_;
  // The low-latency kernel's count of operations per block (device memory).
  std::unique_ptr<DeviceMemory> lowLatencyCounts_;
  // Behind the last low-latency kernel, for a launch on another stream.
  DeviceEvent lowLatencyDone_;
  void* lowLatencyStream_ = nullptr;
  bool lowLatencyDoneEager_ = false;  // recorded outside a capture
  DeviceShmPointToPoint pointToPoint_;
};

}  // namespace hetccl
