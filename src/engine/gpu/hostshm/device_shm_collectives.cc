#include "engine/gpu/hostshm/device_shm_collectives.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "engine/gpu/hostshm/pipeline_steps.h"
#include "op/decision_log.h"
#include "op/op_traits.h"
#include "runtime/reduction.h"
#include "util/dtype.h"
#include "util/error.h"
#include "util/log.h"
#include "util/params.h"

namespace hetccl {
namespace {

constexpr size_t kPage = 4096;
constexpr uint64_t kSlots = DeviceOutboxes::kSlots;

size_t alignUp(size_t bytes, size_t alignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

const char* at(const void* base, size_t offset) {
  return static_cast<const char*>(base) + offset;
}

char* at(void* base, size_t offset) {
  return static_cast<char*>(base) + offset;
}

// Whether `reader` reads `owner`'s slot in each chunk of `op`: then the
// owner waits for the reader's flag to say free before it fills the slot,
// and the reader marks it free once it has read it. A slot holds its
// owner's input, which a reader needs when the owner's input is used and
// the reader's output is written (op_traits.h: a root's alone, or every
// rank's).
bool reads(const Op& op, int reader, int owner, int nranks) {
  return reader != owner && sendSpan(op, owner, nranks).used &&
         recvSpan(op, reader, nranks).used;
}

// Bytes of one rank's part of a buffer that holds a part per rank.
size_t partBytes(const Op& op) { return op.count * dtypeSize(op.dtype); }

// The send channels of a rank hold as much as its collectives' slots.
size_t pairSlotBytes(size_t chunkBytes, int nranks) {
  return alignUp(chunkBytes / std::max(nranks - 1, 1), kPage);
}

// What the ranks tell each other about their GPU.
struct GpuIdentity {
  int32_t pid;
  char busId[32];
};

// `maxBytes`, or 0 when two ranks of different processes share a GPU: the
// kernels of two processes take turns on a GPU (time slices of a
// millisecond or more), and a low-latency kernel waits for the others'.
// Every rank has the same `maxBytes` (HETCCL_GPU_LL_MAX must agree, which
// init checks), so every rank gives the same answer. Collective over `oob`.
size_t lowLatencyBytesFor(Oob& oob, const DeviceModule& module,
                          size_t maxBytes) {
  std::vector<GpuIdentity> gpus(oob.nranks());
  GpuIdentity& own = gpus[oob.rank()];
  own.pid = getpid();
  int device = 0;
  module.check(module.api().getDevice(&device), "asking for the device");
  module.check(module.api().deviceBusId(device, own.busId, sizeof(own.busId)),
               "asking for the GPU's bus id");
  oob.allGather(gpus.data(), sizeof(GpuIdentity));
  for (size_t a = 0; a < gpus.size(); ++a)
    for (size_t b = a + 1; b < gpus.size(); ++b)
      if (gpus[a].pid != gpus[b].pid &&
          std::strncmp(gpus[a].busId, gpus[b].busId, sizeof(own.busId)) == 0) {
        if (maxBytes > 0 && oob.rank() == 0)
          LOG_INFO(kLogShm,
                   "ranks %zu and %zu (processes %d and %d) share GPU %.32s: "
                   "no low-latency collective kernel (their kernels would "
                   "take turns on it)",
                   a, b, gpus[a].pid, gpus[b].pid, gpus[a].busId);
        return 0;
      }
  return maxBytes;
}

}  // namespace

// A slot holds a chunk's contributions and, behind them, the chunk's
// reduced shard (all-reduce).
DeviceShmCollectives::DeviceShmCollectives(Oob& oob, const DeviceModule& module,
                                           size_t chunkBytes,
                                           size_t lowLatencyMaxBytes)
    : module_(module),
      outboxes_(oob, module, 2 * alignUp(chunkBytes, kPage),
                pairSlotBytes(alignUp(chunkBytes, kPage), oob.nranks()),
                lowLatencyBytesFor(oob, module, lowLatencyMaxBytes)),
      rank_(oob.rank()),
      nranks_(oob.nranks()),
      chunkBytes_(alignUp(chunkBytes, kPage)),
      scratchStride_(alignUp(chunkBytes_ / nranks_ + 16, 256)),
      up_(module),
      down_(module),
      start_(module),
      upDone_(module),
      downDone_(module),
      ownPartsStaged_(module),
      lowLatencyAsked_(lowLatencyMaxBytes),
      lowLatencyMaxBytes_(
          outboxes_.lowLatencyHalfLines() > 0 ? lowLatencyMaxBytes : 0),
      lowLatencyDone_(module),
      pointToPoint_(outboxes_, module) {
  scratch_ = std::make_unique<DeviceMemory>(module, scratchStride_ * nranks_);
  for (uint64_t i = 0; i < kSlots; ++i)
    reduced_.push_back(std::make_unique<DeviceEvent>(module));
  if (lowLatencyMaxBytes_ > 0) {
    const size_t bytes = HETCCL_DEVICE_LL_BLOCKS * sizeof(uint64_t);
    lowLatencyCounts_ = std::make_unique<DeviceMemory>(module, bytes);
    const uint64_t zeros[HETCCL_DEVICE_LL_BLOCKS] = {};
    module_.check(module_.api().copyAsync(lowLatencyCounts_->data(), zeros,
                                          bytes, up_.handle()),
                  "zeroing the low-latency counts");
    module_.check(module_.api().streamSynchronize(up_.handle()),
                  "zeroing the low-latency counts");
  }
  LOG_INFO(kLogShm,
           "rank %d: GPU collectives through host memory among %d ranks, "
           "%zu KiB chunks, one kernel for collectives up to %zu bytes",
           rank_, nranks_, chunkBytes_ >> 10, lowLatencyMaxBytes_);
}

// The GPU must be done with the outboxes before they are unregistered.
DeviceShmCollectives::~DeviceShmCollectives() {
  for (void* stream : {up_.handle(), down_.handle()})
    if (int code = module_.api().streamSynchronize(stream))
      LOG_WARN(kLogShm, "rank %d: GPU collective stream failed: %s", rank_,
               module_.api().errorString(code));
}

// A scalar in device memory would have to be read before the launch.
bool DeviceShmCollectives::handles(const std::vector<Op>& ops) const {
  if (ops.size() != 1 || isPointToPoint(ops[0].kind)) return false;
  const ReduceSpec& reduce = ops[0].reduce;
  return !(opTraits(ops[0].kind).reduces && reduce.preMultiply &&
           reduce.scalarPointer != nullptr);
}

void DeviceShmCollectives::launch(const Op& op, void* stream, bool capturing,
                                  bool agreed) {
  if (op.count == 0) return;
  if (takesLowLatencyKernel(op)) return launchLowLatency(op, stream, capturing);
  const auto& api = module_.api();
  if (!agreed)
    module_.check(
        api.waitValue64(stream, outboxes_.agreedWord(rank_), op.sequence),
        "waiting until every rank made the same call");
  start_.record(stream);
  module_.check(api.streamWaitEvent(up_.handle(), start_.handle()),
                "ordering the collective after the caller's work");
  module_.check(api.streamWaitEvent(down_.handle(), start_.handle()),
                "ordering the collective after the caller's work");
  switch (op.kind) {
    case OpKind::AllReduce:
      allReduce(op);
      break;
    case OpKind::ReduceScatter:
      reduceScatter(op);
      break;
    case OpKind::AllGather:
      allGather(op);
      break;
    case OpKind::Broadcast:
      broadcast(op);
      break;
    case OpKind::AlltoAll:
      allToAll(op);
      break;
    case OpKind::Reduce:
      reduceToRoot(op);
      break;
    case OpKind::Gather:
      gather(op);
      break;
    case OpKind::Scatter:
      scatter(op);
      break;
    case OpKind::Send:
    case OpKind::Recv:
      fail(ncclInternalError, "%s is launched with launchPointToPoint",
           opKindName(op.kind));
  }
  upDone_.record(up_.handle());
  downDone_.record(down_.handle());
  module_.check(api.streamWaitEvent(stream, upDone_.handle()),
                "ordering the caller's work after the collective");
  module_.check(api.streamWaitEvent(stream, downDone_.handle()),
                "ordering the caller's work after the collective");
}

// ---------------------------------------------------------------------------
// Chunks.

size_t DeviceShmCollectives::maxStepBytes(OpKind kind) const {
  switch (kind) {
    case OpKind::AllReduce:
    case OpKind::AllGather:
    case OpKind::Broadcast:
    case OpKind::Gather:
      return chunkBytes_;
    case OpKind::ReduceScatter:
    case OpKind::AlltoAll:
    case OpKind::Reduce:
    case OpKind::Scatter:
      return partsStepBytes();
    case OpKind::Send:
    case OpKind::Recv:
      fail(ncclInternalError, "%s has no collective steps", opKindName(kind));
  }
  failUnknownOpKind(kind);
}

size_t DeviceShmCollectives::stepElements(const Op& op) const {
  const size_t elementBytes = dtypeSize(op.dtype);
  const size_t bytes =
      pipelineStepBytes(op.count * elementBytes, maxStepBytes(op.kind));
  return std::max<size_t>(bytes / elementBytes, 1);
}

DeviceShmCollectives::Chunk DeviceShmCollectives::chunkAt(
    const Op& op, size_t stepElements, uint64_t index) const {
  const size_t first = index * stepElements;
  return {chunksLaunched_ + index, first,
          std::min(stepElements, op.count - first), dtypeSize(op.dtype)};
}

template <typename Step>
void DeviceShmCollectives::forEachChunk(const Op& op, Step step) {
  const size_t elements = stepElements(op);
  const uint64_t chunks = (op.count + elements - 1) / elements;
  for (uint64_t c = 0; c < chunks; ++c) step(chunkAt(op, elements, c));
  chunksLaunched_ += chunks;
}

size_t DeviceShmCollectives::shardBegin(const Chunk& chunk, int rank) const {
  return chunk.length * rank / nranks_;
}

size_t DeviceShmCollectives::shardLength(const Chunk& chunk, int rank) const {
  return shardBegin(chunk, rank + 1) - shardBegin(chunk, rank);
}

// Per peer, when each peer's part of a chunk has a place of its own in a
// slot (and in the scratch): all of them fit in chunkBytes_.
size_t DeviceShmCollectives::partsStepBytes() const {
  return chunkBytes_ / nranks_;
}

// ---------------------------------------------------------------------------
// Stream steps.

void DeviceShmCollectives::copy(void* stream, void* to, const void* from,
                                size_t bytes, const char* what) {
  if (bytes > 0)
    module_.check(module_.api().copyAsync(to, from, bytes, stream), what);
}

void DeviceShmCollectives::waitFor(void* stream, const uint64_t* flag,
                                   uint64_t bits, const char* what) {
  module_.check(module_.api().waitBits64(stream, flag, bits), what);
}

void DeviceShmCollectives::setFlag(void* stream, uint64_t* flag, uint64_t value,
                                   const char* what) {
  module_.check(module_.api().writeValue64(stream, flag, value), what);
}

// down: `to` = the op's reduction of `sources` (one per rank, rank order).
void DeviceShmCollectives::reduce(const Op& op, void* to,
                                  const void* const* sources, size_t length) {
  if (length == 0) return;
  hetcclDeviceReduction reduction = deviceReduction(
      op.reduce.over(op.dtype, nranks_), to, sources, nranks_, length);
  module_.check(module_.api().reduceAsync(&reduction, down_.handle()),
                "reducing a chunk on the GPU");
}

// Every other rank's flag, not only those of this op's readers: a rank
// that read the slot in an earlier op may not have got to it yet.
void DeviceShmCollectives::waitForFreeSlot(const Chunk& chunk) {
  for (int p = 0; p < nranks_; ++p)
    if (p != rank_)
      waitFor(up_.handle(), outboxes_.slotFlag(rank_, chunk.index, p),
              DeviceOutboxes::kFree, "waiting for a free outbox slot");
}

void DeviceShmCollectives::markSlot(const Op& op, const Chunk& chunk,
                                    uint64_t bits, const char* what) {
  for (int p = 0; p < nranks_; ++p)
    if (reads(op, p, rank_, nranks_))
      setFlag(up_.handle(), outboxes_.slotFlag(rank_, chunk.index, p), bits,
              what);
}

void DeviceShmCollectives::releaseSlots(const Op& op, const Chunk& chunk) {
  for (int p = 0; p < nranks_; ++p)
    if (reads(op, rank_, p, nranks_))
      setFlag(down_.handle(), outboxes_.slotFlag(p, chunk.index, rank_),
              DeviceOutboxes::kFree, "releasing another rank's outbox slot");
}

// ---------------------------------------------------------------------------
// Low-latency collectives: one kernel on the caller's stream, no event,
// copy or stream memory operation around it.

namespace {

// The kernel's kind for `kind`, or -1 for a collective it does not run.
int lowLatencyKind(OpKind kind) {
  switch (kind) {
    case OpKind::AllReduce:
      return hetcclLowLatencyAllReduce;
    case OpKind::ReduceScatter:
      return hetcclLowLatencyReduceScatter;
    case OpKind::AllGather:
      return hetcclLowLatencyAllGather;
    case OpKind::Broadcast:
      return hetcclLowLatencyBroadcast;
    default:
      return -1;
  }
}

}  // namespace

size_t DeviceShmCollectives::largerBufferBytes(const Op& op) const {
  const bool parts =
      op.kind == OpKind::ReduceScatter || op.kind == OpKind::AllGather;
  return (parts ? nranks_ : 1) * partBytes(op);
}

// By the larger buffer, which bounds what a rank posts.
bool DeviceShmCollectives::takesLowLatencyKernel(const Op& op) const {
  return lowLatencyKind(op.kind) >= 0 &&
         largerBufferBytes(op) <= lowLatencyMaxBytes_;
}

std::string DeviceShmCollectives::whyNotLowLatency(const Op& op) const {
  if (lowLatencyKind(op.kind) < 0)
    return format("no low-latency kernel for %s", opKindName(op.kind));
  if (lowLatencyAsked_ == 0) return "HETCCL_GPU_LL_MAX=0";
  if (lowLatencyMaxBytes_ == 0)
    return "no low-latency kernel: ranks of two processes share a GPU";
  return format("larger buffer of %s > HETCCL_GPU_LL_MAX=%s",
                bytesText(largerBufferBytes(op)).c_str(),
                sizeText(static_cast<int64_t>(lowLatencyAsked_)).c_str());
}

std::string DeviceShmCollectives::describePipelined(const Op& op) const {
  const size_t elements = stepElements(op);
  const bool shared = maxStepBytes(op.kind) != chunkBytes_;
  return format(
      "pipelined outboxes: %s; %zu step(s) of up to %s (HETCCL_GPU_CHUNK=%s%s; "
      "an op of fewer than 4 chunks goes in 4 steps of at least 1M)",
      whyNotLowLatency(op).c_str(), (op.count + elements - 1) / elements,
      bytesText(std::min(elements, op.count) * dtypeSize(op.dtype)).c_str(),
      sizeText(static_cast<int64_t>(chunkBytes_)).c_str(),
      shared ? format(" shared by %d ranks", nranks_).c_str() : "");
}

// The tests of handles(), launch() and takesLowLatencyKernel(), in words.
std::string DeviceShmCollectives::describeChoice(
    const std::vector<Op>& ops) const {
  if (ops.size() != 1)
    return format(
        "staged engine: a group of %zu collectives (the outboxes "
        "run one per launch)",
        ops.size());
  if (!handles(ops))
    return "staged engine: a reduction by a scalar in device memory (the "
           "outboxes would have to read it before the launch)";
  const Op& op = ops[0];
  if (op.count == 0) return "nothing to move";
  if (takesLowLatencyKernel(op))
    return format(
        "low-latency kernel: larger buffer of %s <= "
        "HETCCL_GPU_LL_MAX=%s",
        bytesText(largerBufferBytes(op)).c_str(),
        sizeText(static_cast<int64_t>(lowLatencyAsked_)).c_str());
  return describePipelined(op);
}

// The kernels of a rank must run one after another (their line areas and
// counts serve one operation at a time): a launch on another stream than
// the last one's waits for it. Within a capture the caller orders the
// graph against eager work, as for any graph launch.
void DeviceShmCollectives::launchLowLatency(const Op& op, void* stream,
                                            bool capturing) {
  const auto& api = module_.api();
  if (stream != lowLatencyStream_ && lowLatencyDoneEager_ && !capturing)
    module_.check(api.streamWaitEvent(stream, lowLatencyDone_.handle()),
                  "ordering a low-latency collective after the last one");
  hetcclDeviceLowLatencyCollective collective{};
  collective.kind = lowLatencyKind(op.kind);
  collective.root = op.kind == OpKind::Broadcast ? op.root : 0;
  collective.reduction =
      deviceReduction(op.reduce.over(op.dtype, nranks_), op.recvbuff,
                      &op.sendbuff, 1, op.count);
  collective.rank = rank_;
  collective.nranks = nranks_;
  for (int r = 0; r < nranks_; ++r)
    collective.areas[r] = outboxes_.lowLatencyArea(r);
  collective.halfLines = outboxes_.lowLatencyHalfLines();
  collective.counts = reinterpret_cast<uint64_t*>(lowLatencyCounts_->data());
  collective.release = outboxes_.releaseWord();
  module_.check(api.lowLatencyCollective(&collective, stream),
                "launching a low-latency collective");
  lowLatencyDone_.record(stream);
  lowLatencyStream_ = stream;
  lowLatencyDoneEager_ = !capturing;
}

// ---------------------------------------------------------------------------
// All-reduce. The up stream takes the contributions of chunk c, then the
// result of chunk c-1; the down stream the reduction of chunk c, then the
// gather of chunk c-1. The one chunk of lag lets both directions run at
// once, and is free of deadlock as long as kSlots >= 2.

void DeviceShmCollectives::allReduce(const Op& op) {
  const size_t elements = stepElements(op);
  const uint64_t chunks = (op.count + elements - 1) / elements;
  for (uint64_t c = 0; c <= chunks; ++c) {
    if (c < chunks) {
      Chunk chunk = chunkAt(op, elements, c);
      sendContributions(op, chunk);
      reduceOwnShard(op, chunk);
    }
    if (c > 0) {
      Chunk previous = chunkAt(op, elements, c - 1);
      publishResult(op, previous);
      gatherResults(op, previous);
    }
  }
  chunksLaunched_ += chunks;
}

// up: the parts of this chunk that other ranks own go to the outbox.
void DeviceShmCollectives::sendContributions(const Op& op, const Chunk& chunk) {
  waitForFreeSlot(chunk);
  const size_t e = chunk.elementBytes;
  const char* input = at(op.sendbuff, chunk.offset());
  char* contributions = outboxes_.slot(rank_, chunk.index);
  const size_t ownBegin = shardBegin(chunk, rank_) * e;
  const size_t ownEnd = ownBegin + shardLength(chunk, rank_) * e;
  copy(up_.handle(), contributions, input, ownBegin,
       "copying an all-reduce chunk to host memory");
  copy(up_.handle(), contributions + ownEnd, input + ownEnd,
       chunk.bytes() - ownEnd, "copying an all-reduce chunk to host memory");
  markSlot(op, chunk, DeviceOutboxes::kFilled, "signalling a staged chunk");
}

// down: the other ranks' parts of this rank's shard come to the GPU and
// are reduced with this rank's own part, in rank order.
void DeviceShmCollectives::reduceOwnShard(const Op& op, const Chunk& chunk) {
  const size_t e = chunk.elementBytes;
  const size_t begin = shardBegin(chunk, rank_);
  const size_t length = shardLength(chunk, rank_);
  const void* sources[HETCCL_DEVICE_MAX_SOURCES];
  for (int p = 0; p < nranks_; ++p) {
    if (p == rank_) {
      sources[p] = at(op.sendbuff, (chunk.first + begin) * e);
      continue;
    }
    waitFor(down_.handle(), outboxes_.slotFlag(p, chunk.index, rank_),
            DeviceOutboxes::kFilled, "waiting for another rank's chunk");
    char* part = scratch_->data() + p * scratchStride_;
    copy(down_.handle(), part, outboxes_.slot(p, chunk.index) + begin * e,
         length * e, "copying another rank's part to the GPU");
    sources[p] = part;
  }
  reduce(op, at(op.recvbuff, (chunk.first + begin) * e), sources, length);
  reduced_[chunk.index % kSlots]->record(down_.handle());
}

// up: the reduced shard goes to the outbox for the other ranks.
void DeviceShmCollectives::publishResult(const Op& op, const Chunk& chunk) {
  const size_t e = chunk.elementBytes;
  const size_t begin = shardBegin(chunk, rank_);
  module_.check(module_.api().streamWaitEvent(
                    up_.handle(), reduced_[chunk.index % kSlots]->handle()),
                "ordering a result after its reduction");
  copy(up_.handle(), outboxes_.slot(rank_, chunk.index) + chunkBytes_,
       at(op.recvbuff, (chunk.first + begin) * e),
       shardLength(chunk, rank_) * e, "copying a reduced shard to host memory");
  markSlot(op, chunk, DeviceOutboxes::kFilled | DeviceOutboxes::kResult,
           "signalling a reduced shard");
}

// down: every other rank's reduced shard comes into the output; then the
// slot is theirs to reuse.
void DeviceShmCollectives::gatherResults(const Op& op, const Chunk& chunk) {
  const size_t e = chunk.elementBytes;
  for (int p = 0; p < nranks_; ++p) {
    if (p == rank_) continue;
    waitFor(down_.handle(), outboxes_.slotFlag(p, chunk.index, rank_),
            DeviceOutboxes::kResult,
            "waiting for another rank's reduced shard");
    copy(down_.handle(),
         at(op.recvbuff, (chunk.first + shardBegin(chunk, p)) * e),
         outboxes_.slot(p, chunk.index) + chunkBytes_,
         shardLength(chunk, p) * e, "copying a reduced shard to the GPU");
  }
  releaseSlots(op, chunk);
}

// ---------------------------------------------------------------------------
// The others. Buffers of reduce-scatter, all-to-all and (at the root)
// scatter hold one part per rank of op.count elements; a chunk is the same
// elements of every part, and each peer's part has partsStepBytes() of the
// slot. Each rank stages only what others read: a root reads nothing.

// up: this rank's input of the chunk to its slot.
void DeviceShmCollectives::stageInput(const Op& op, const Chunk& chunk) {
  waitForFreeSlot(chunk);
  copy(up_.handle(), outboxes_.slot(rank_, chunk.index),
       at(op.sendbuff, chunk.offset()), chunk.bytes(),
       "copying a chunk to host memory");
  markSlot(op, chunk, DeviceOutboxes::kFilled, "signalling a staged chunk");
}

// up: each peer's part of the chunk to the slot, at the peer's place.
void DeviceShmCollectives::stagePeerParts(const Op& op, const Chunk& chunk) {
  waitForFreeSlot(chunk);
  char* mine = outboxes_.slot(rank_, chunk.index);
  for (int p = 0; p < nranks_; ++p)
    if (p != rank_)
      copy(up_.handle(), mine + p * chunk.bytes(),
           at(op.sendbuff, p * partBytes(op) + chunk.offset()), chunk.bytes(),
           "copying parts of a chunk to host memory");
  markSlot(op, chunk, DeviceOutboxes::kFilled, "signalling a staged chunk");
}

// down: this rank's own part of the chunk, unless it is in place.
void DeviceShmCollectives::copyOwnPart(const void* from, void* to,
                                       const Chunk& chunk) {
  if (from != to)
    copy(down_.handle(), to, from, chunk.bytes(),
         "copying this rank's own part of a chunk");
}

// down: the chunk's bytes at `slotOffset` of `owner`'s slot, once staged.
void DeviceShmCollectives::takePart(int owner, size_t slotOffset, void* to,
                                    const Chunk& chunk) {
  waitFor(down_.handle(), outboxes_.slotFlag(owner, chunk.index, rank_),
          DeviceOutboxes::kFilled, "waiting for another rank's chunk");
  copy(down_.handle(), to, outboxes_.slot(owner, chunk.index) + slotOffset,
       chunk.bytes(), "copying another rank's part to the GPU");
}

void DeviceShmCollectives::reduceScatter(const Op& op) {
  forEachChunk(op, [&](const Chunk& chunk) {
    stagePeerParts(op, chunk);
    const void* sources[HETCCL_DEVICE_MAX_SOURCES];
    for (int p = 0; p < nranks_; ++p) {
      if (p == rank_) {
        sources[p] = at(op.sendbuff, rank_ * partBytes(op) + chunk.offset());
        continue;
      }
      char* part = scratch_->data() + p * scratchStride_;
      takePart(p, rank_ * chunk.bytes(), part, chunk);
      sources[p] = part;
    }
    reduce(op, at(op.recvbuff, chunk.offset()), sources, chunk.length);
    releaseSlots(op, chunk);
  });
}

void DeviceShmCollectives::allToAll(const Op& op) {
  forEachChunk(op, [&](const Chunk& chunk) {
    stagePeerParts(op, chunk);
    // In place, the outputs overwrite inputs: not before they are staged.
    ownPartsStaged_.record(up_.handle());
    module_.check(
        module_.api().streamWaitEvent(down_.handle(), ownPartsStaged_.handle()),
        "ordering outputs after the inputs they overwrite");
    const size_t own = rank_ * partBytes(op) + chunk.offset();
    copyOwnPart(at(op.sendbuff, own), at(op.recvbuff, own), chunk);
    for (int p = 0; p < nranks_; ++p)
      if (p != rank_)
        takePart(p, rank_ * chunk.bytes(),
                 at(op.recvbuff, p * partBytes(op) + chunk.offset()), chunk);
    releaseSlots(op, chunk);
  });
}

void DeviceShmCollectives::allGather(const Op& op) {
  forEachChunk(op, [&](const Chunk& chunk) {
    stageInput(op, chunk);
    copyOwnPart(at(op.sendbuff, chunk.offset()),
                at(op.recvbuff, rank_ * partBytes(op) + chunk.offset()), chunk);
    for (int p = 0; p < nranks_; ++p)
      if (p != rank_)
        takePart(p, 0, at(op.recvbuff, p * partBytes(op) + chunk.offset()),
                 chunk);
    releaseSlots(op, chunk);
  });
}

void DeviceShmCollectives::broadcast(const Op& op) {
  const int root = op.root;
  forEachChunk(op, [&](const Chunk& chunk) {
    if (rank_ == root) {
      stageInput(op, chunk);
      copyOwnPart(at(op.sendbuff, chunk.offset()),
                  at(op.recvbuff, chunk.offset()), chunk);
    } else {
      takePart(root, 0, at(op.recvbuff, chunk.offset()), chunk);
    }
    releaseSlots(op, chunk);
  });
}

// The root's output is the reduction of every input in rank order, the
// same bits as the all-reduce's.
void DeviceShmCollectives::reduceToRoot(const Op& op) {
  const int root = op.root;
  forEachChunk(op, [&](const Chunk& chunk) {
    if (rank_ != root) {
      stageInput(op, chunk);
    } else {
      const void* sources[HETCCL_DEVICE_MAX_SOURCES];
      for (int p = 0; p < nranks_; ++p) {
        if (p == rank_) {
          sources[p] = at(op.sendbuff, chunk.offset());
          continue;
        }
        char* part = scratch_->data() + p * scratchStride_;
        takePart(p, 0, part, chunk);
        sources[p] = part;
      }
      reduce(op, at(op.recvbuff, chunk.offset()), sources, chunk.length);
    }
    releaseSlots(op, chunk);
  });
}

void DeviceShmCollectives::gather(const Op& op) {
  const int root = op.root;
  forEachChunk(op, [&](const Chunk& chunk) {
    if (rank_ != root) {
      stageInput(op, chunk);
    } else {
      for (int p = 0; p < nranks_; ++p) {
        void* to = at(op.recvbuff, p * partBytes(op) + chunk.offset());
        if (p == rank_)
          copyOwnPart(at(op.sendbuff, chunk.offset()), to, chunk);
        else
          takePart(p, 0, to, chunk);
      }
    }
    releaseSlots(op, chunk);
  });
}

void DeviceShmCollectives::scatter(const Op& op) {
  const int root = op.root;
  forEachChunk(op, [&](const Chunk& chunk) {
    if (rank_ == root) {
      stagePeerParts(op, chunk);
      copyOwnPart(at(op.sendbuff, root * partBytes(op) + chunk.offset()),
                  at(op.recvbuff, chunk.offset()), chunk);
    } else {
      takePart(root, rank_ * chunk.bytes(), at(op.recvbuff, chunk.offset()),
               chunk);
    }
    releaseSlots(op, chunk);
  });
}

}  // namespace hetccl
