#include "algo/device_shm_all_reduce.h"

#include <cstring>
#include <limits>
#include <optional>

#include "util/collective_setup.h"
#include "util/dtype.h"
#include "util/error.h"
#include "util/log.h"

namespace hetccl {

// The counters at the start of each outbox; the chunk slots follow. Each
// counter has a cache line of its own: different GPUs write them.
struct DeviceShmAllReduce::Outbox {
  struct alignas(64) Counter {
    uint64_t value;
  };
  Counter staged;   // chunks whose parts for other ranks are in the slots
  Counter reduced;  // chunks whose reduced shard is in the slots
  Counter consumed[HETCCL_DEVICE_MAX_SOURCES];  // by reader: chunks read
};

// One pipeline step: elements [first, first + length) of the buffers,
// split into nranks contiguous shards, shard r reduced by rank r.
struct DeviceShmAllReduce::Chunk {
  uint64_t index;  // in the communicator's sequence of chunks
  size_t first;
  size_t length;
  size_t elementBytes;
  int nranks;

  size_t shardBegin(int rank) const { return length * rank / nranks; }
  size_t shardLength(int rank) const {
    return shardBegin(rank + 1) - shardBegin(rank);
  }
};

namespace {

constexpr size_t kPage = 4096;
constexpr size_t kNameBytes = 64;
constexpr size_t kPipelineSteps = 4;
constexpr size_t kMinChunkBytes = 256 << 10;

size_t alignUp(size_t bytes, size_t alignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

struct OutboxRecord {
  char name[kNameBytes];
};

const char* at(const void* base, size_t offset) {
  return static_cast<const char*>(base) + offset;
}

char* at(void* base, size_t offset) {
  return static_cast<char*>(base) + offset;
}

}  // namespace

DeviceShmAllReduce::DeviceShmAllReduce(Oob& oob, const DeviceModule& module,
                                       size_t chunkBytes)
    : module_(module),
      rank_(oob.rank()),
      nranks_(oob.nranks()),
      chunkBytes_(alignUp(chunkBytes, kPage)),
      slotBytes_(2 * chunkBytes_),
      scratchStride_(alignUp(chunkBytes_ / oob.nranks() + 16, 256)),
      up_(module),
      down_(module),
      start_(module),
      upDone_(module),
      downDone_(module) {
  static_assert(sizeof(Outbox) <= kPage, "outbox counters exceed a page");
  if (nranks_ > HETCCL_DEVICE_MAX_SOURCES)
    fail(ncclInternalError, "GPU shm all-reduce takes at most %d ranks",
         HETCCL_DEVICE_MAX_SOURCES);
  scratch_ = std::make_unique<DeviceMemory>(module, scratchStride_ * nranks_);
  for (uint64_t i = 0; i < kSlots; ++i)
    reduced_.push_back(std::make_unique<DeviceEvent>(module));
  mapOutboxes(oob);
  LOG_INFO(kLogShm,
           "rank %d: GPU all-reduce through host memory among %d ranks, "
           "%zu KiB chunks",
           rank_, nranks_, chunkBytes_ >> 10);
}

// The GPU must be done with the outboxes before they are unregistered.
DeviceShmAllReduce::~DeviceShmAllReduce() {
  for (void* stream : {up_.handle(), down_.handle()})
    if (int code = module_.api().streamSynchronize(stream))
      LOG_WARN(kLogShm, "rank %d: GPU all-reduce stream failed: %s", rank_,
               module_.api().errorString(code));
}

void DeviceShmAllReduce::mapOutboxes(Oob& oob) {
  const size_t bytes = kPage + kSlots * slotBytes_;
  std::optional<Error> failure;
  ShmSegment own;
  captureFailure(failure, [&] {
    own = ShmSegment::create(ShmSegment::uniqueName("hetccl-gpu"), bytes);
    // First touch here: the pages go to this process's memory node, near
    // the GPU that writes them, before any other rank maps them.
    std::memset(own.data(), 0, bytes);
  });
  std::vector<OutboxRecord> records(nranks_);
  std::memset(records.data(), 0, records.size() * sizeof(OutboxRecord));
  std::strncpy(records[rank_].name, own.name().c_str(), kNameBytes - 1);
  oob.allGather(records.data(), sizeof(OutboxRecord));
  agreeOnSuccess(oob, failure, "GPU all-reduce", "creating its outbox");
  segments_.resize(nranks_);
  captureFailure(failure, [&] {
    for (int r = 0; r < nranks_; ++r) {
      records[r].name[kNameBytes - 1] = '\0';
      segments_[r] = r == rank_ ? std::move(own)
                                : ShmSegment::open(records[r].name, bytes);
      registrations_.push_back(std::make_unique<HostRegistration>(
          module_, segments_[r].data(), bytes));
    }
  });
  agreeOnSuccess(oob, failure, "GPU all-reduce", "mapping the outboxes");
  segments_[rank_].unlink();
}

DeviceShmAllReduce::Outbox& DeviceShmAllReduce::outbox(int rank) const {
  return *static_cast<Outbox*>(segments_[rank].data());
}

char* DeviceShmAllReduce::slot(int rank, uint64_t chunk) const {
  return at(segments_[rank].data(), kPage + (chunk % kSlots) * slotBytes_);
}

bool DeviceShmAllReduce::handles(const std::vector<Op>& ops) const {
  if (ops.size() != 1 || ops[0].kind != OpKind::AllReduce) return false;
  // A scalar in device memory would have to be read before the launch.
  const ReduceSpec& reduce = ops[0].reduce;
  return !(reduce.preMultiply && reduce.scalarPointer != nullptr);
}

// The configured chunk, or for an op of fewer than kPipelineSteps chunks a
// smaller one (at least kMinChunkBytes): with a single chunk, copies to and
// from the host could not overlap at all.
size_t DeviceShmAllReduce::chunkElements(const Op& op) const {
  const size_t elementBytes = dtypeSize(op.dtype);
  const size_t opBytes = op.count * elementBytes;
  const size_t stepBytes =
      alignUp((opBytes + kPipelineSteps - 1) / kPipelineSteps, kPage);
  return std::min(chunkBytes_, std::max(kMinChunkBytes, stepBytes)) /
         elementBytes;
}

DeviceShmAllReduce::Chunk DeviceShmAllReduce::chunkAt(const Op& op,
                                                      uint64_t index) const {
  const size_t elements = chunkElements(op);
  const size_t first = index * elements;
  return {chunksLaunched_ + index, first, std::min(elements, op.count - first),
          dtypeSize(op.dtype), nranks_};
}

void DeviceShmAllReduce::launch(const Op& op, void* stream) {
  if (op.count == 0) return;
  const auto& api = module_.api();
  const size_t elements = chunkElements(op);
  const uint64_t chunks = (op.count + elements - 1) / elements;
  start_.record(stream);
  module_.check(api.streamWaitEvent(up_.handle(), start_.handle()),
                "ordering the all-reduce after the caller's work");
  module_.check(api.streamWaitEvent(down_.handle(), start_.handle()),
                "ordering the all-reduce after the caller's work");
  // One chunk of lag between the phases: see the header.
  for (uint64_t c = 0; c <= chunks; ++c) {
    if (c < chunks) {
      Chunk chunk = chunkAt(op, c);
      sendContributions(op, chunk);
      reduceOwnShard(op, chunk);
    }
    if (c > 0) {
      Chunk previous = chunkAt(op, c - 1);
      publishResult(op, previous);
      gatherResults(op, previous);
    }
  }
  chunksLaunched_ += chunks;
  upDone_.record(up_.handle());
  downDone_.record(down_.handle());
  module_.check(api.streamWaitEvent(stream, upDone_.handle()),
                "ordering the caller's work after the all-reduce");
  module_.check(api.streamWaitEvent(stream, downDone_.handle()),
                "ordering the caller's work after the all-reduce");
}

// up: the parts of this chunk that other ranks own go to the outbox, once
// every rank has read what the slot held kSlots chunks ago.
void DeviceShmAllReduce::sendContributions(const Op& op, const Chunk& chunk) {
  const auto& api = module_.api();
  void* up = up_.handle();
  Outbox& mine = outbox(rank_);
  if (chunk.index >= kSlots)
    for (int p = 0; p < nranks_; ++p)
      if (p != rank_)
        module_.check(api.waitValue64(up, &mine.consumed[p].value,
                                      chunk.index + 1 - kSlots),
                      "waiting for a free outbox slot");
  const size_t e = chunk.elementBytes;
  const char* input = at(op.sendbuff, chunk.first * e);
  char* contributions = slot(rank_, chunk.index);
  const size_t ownBegin = chunk.shardBegin(rank_) * e;
  const size_t ownEnd = ownBegin + chunk.shardLength(rank_) * e;
  if (ownBegin > 0)
    module_.check(api.copyAsync(contributions, input, ownBegin, up),
                  "copying an all-reduce chunk to host memory");
  if (chunk.length * e > ownEnd)
    module_.check(api.copyAsync(contributions + ownEnd, input + ownEnd,
                                chunk.length * e - ownEnd, up),
                  "copying an all-reduce chunk to host memory");
  module_.check(api.writeValue64(up, &mine.staged.value, chunk.index + 1),
                "signalling a staged chunk");
}

// down: the other ranks' parts of this rank's shard come to the GPU and
// are reduced with this rank's own part, in rank order.
void DeviceShmAllReduce::reduceOwnShard(const Op& op, const Chunk& chunk) {
  const auto& api = module_.api();
  void* down = down_.handle();
  const size_t e = chunk.elementBytes;
  const size_t begin = chunk.shardBegin(rank_);
  const size_t length = chunk.shardLength(rank_);
  hetcclDeviceReduction reduction{};
  for (int p = 0; p < nranks_; ++p) {
    if (p == rank_) {
      reduction.srcs[p] = at(op.sendbuff, (chunk.first + begin) * e);
      continue;
    }
    module_.check(
        api.waitValue64(down, &outbox(p).staged.value, chunk.index + 1),
        "waiting for another rank's chunk");
    char* part = scratch_->data() + p * scratchStride_;
    module_.check(
        api.copyAsync(part, slot(p, chunk.index) + begin * e, length * e, down),
        "copying another rank's part to the GPU");
    reduction.srcs[p] = part;
  }
  reduction.dst = at(op.recvbuff, (chunk.first + begin) * e);
  reduction.nsrcs = nranks_;
  reduction.count = length;
  reduction.dtype = op.dtype;
  reduction.op = op.reduce.base;
  reduction.applyPreScale = op.reduce.preMultiply;
  if (op.reduce.preMultiply)
    std::memcpy(&reduction.preScale, op.reduce.scalar(), e);
  reduction.applyDivisor = op.reduce.average;
  reduction.divisor = static_cast<uint64_t>(nranks_);
  if (length > 0)
    module_.check(api.reduceAsync(&reduction, down), "reducing a shard");
  reduced_[chunk.index % kSlots]->record(down);
}

// up: the reduced shard goes to the outbox for the other ranks.
void DeviceShmAllReduce::publishResult(const Op& op, const Chunk& chunk) {
  const auto& api = module_.api();
  void* up = up_.handle();
  const size_t e = chunk.elementBytes;
  const size_t begin = chunk.shardBegin(rank_);
  module_.check(
      api.streamWaitEvent(up, reduced_[chunk.index % kSlots]->handle()),
      "ordering a result after its reduction");
  module_.check(api.copyAsync(slot(rank_, chunk.index) + chunkBytes_,
                              at(op.recvbuff, (chunk.first + begin) * e),
                              chunk.shardLength(rank_) * e, up),
                "copying a reduced shard to host memory");
  module_.check(
      api.writeValue64(up, &outbox(rank_).reduced.value, chunk.index + 1),
      "signalling a reduced shard");
}

// down: every other rank's reduced shard comes into the output; then the
// slot is theirs to reuse.
void DeviceShmAllReduce::gatherResults(const Op& op, const Chunk& chunk) {
  const auto& api = module_.api();
  void* down = down_.handle();
  const size_t e = chunk.elementBytes;
  for (int p = 0; p < nranks_; ++p) {
    if (p == rank_) continue;
    module_.check(
        api.waitValue64(down, &outbox(p).reduced.value, chunk.index + 1),
        "waiting for another rank's reduced shard");
    module_.check(
        api.copyAsync(at(op.recvbuff, (chunk.first + chunk.shardBegin(p)) * e),
                      slot(p, chunk.index) + chunkBytes_,
                      chunk.shardLength(p) * e, down),
        "copying a reduced shard to the GPU");
  }
  for (int p = 0; p < nranks_; ++p)
    if (p != rank_)
      module_.check(api.writeValue64(down, &outbox(p).consumed[rank_].value,
                                     chunk.index + 1),
                    "releasing another rank's outbox slot");
}

void DeviceShmAllReduce::releaseWaits() {
  const uint64_t all = std::numeric_limits<uint64_t>::max();
  for (int r = 0; r < nranks_; ++r) {
    Outbox& box = outbox(r);
    __atomic_store_n(&box.staged.value, all, __ATOMIC_RELEASE);
    __atomic_store_n(&box.reduced.value, all, __ATOMIC_RELEASE);
    for (auto& counter : box.consumed)
      __atomic_store_n(&counter.value, all, __ATOMIC_RELEASE);
  }
}

}  // namespace hetccl
