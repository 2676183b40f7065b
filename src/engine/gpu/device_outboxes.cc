#include "engine/gpu/device_outboxes.h"

#include <chrono>
#include <cstring>

#include "runtime/device/device_module.h"
#include "runtime/device/low_latency_lines.h"
#include "transport/shm/segment_exchange.h"
#include "transport/shm/shm_room.h"
#include "util/error.h"

namespace hetccl {

namespace {

constexpr uint64_t kSlots = DeviceOutboxes::kSlots;

// The flags at the start of each outbox; the slots follow. Each flag has a
// cache line of its own: different GPUs write them.
struct OutboxFlags {
  struct alignas(64) Flag {
    uint64_t value;
  };
  Flag slot[kSlots][HETCCL_DEVICE_MAX_SOURCES];  // by slot, then reader
  Flag pair[HETCCL_DEVICE_MAX_SOURCES][kSlots];  // by destination, then slot
  Flag failed;    // 1 once the owner released the waits on a failure
  Flag left;      // 1 once the owner released them as it went away
  Flag released;  // 1 once the owner released them for either reason

  // Every flag of the slots and channels.
  template <typename Visit>
  void forEachFlag(Visit visit) {
    for (auto& bySlot : slot)
      for (Flag& flag : bySlot) visit(flag.value);
    for (auto& byDestination : pair)
      for (Flag& flag : byDestination) visit(flag.value);
  }
};

constexpr size_t kPage = 4096;
constexpr size_t kFlagBytes = (sizeof(OutboxFlags) + kPage - 1) / kPage * kPage;

OutboxFlags& flagsOf(const ShmSegment& outbox) {
  return *static_cast<OutboxFlags*>(outbox.data());
}

size_t pageAligned(size_t bytes) { return (bytes + kPage - 1) / kPage * kPage; }

}  // namespace

DeviceOutboxes::DeviceOutboxes(Oob& oob, const DeviceModule& module,
                               size_t slotBytes, size_t pairSlotBytes,
                               size_t lowLatencyBytes)
    : rank_(oob.rank()),
      nranks_(oob.nranks()),
      slotBytes_(slotBytes),
      pairSlotBytes_(pairSlotBytes),
      lowLatencyHalfLines_(
          lowLatencyBytes ? lowlatency::linesFor(lowLatencyBytes) : 0) {
  if (nranks_ > HETCCL_DEVICE_MAX_SOURCES)
    fail(ncclInternalError, "GPU outboxes take at most %d ranks",
         HETCCL_DEVICE_MAX_SOURCES);
  const size_t bytes =
      slotsOffset() + kSlots * (slotBytes_ + (nranks_ - 1) * pairSlotBytes_);
  SegmentExchange exchange;
  exchange.what = "GPU outboxes";
  exchange.namePrefix = "hetccl-gpu";
  exchange.ownBytes = [&] { return bytes; };
  exchange.sizedBy = format(
      "HETCCL_GPU_CHUNK (slots of %s) and HETCCL_GPU_LL_MAX with %d ranks",
      describeBytes(slotBytes_).c_str(), nranks_);
  // First touch here: the pages go to this process's memory node, near the
  // GPU that writes them, before any other rank maps them.
  exchange.format = [&](ShmSegment& own) {
    std::memset(own.data(), 0, bytes);
    flagsOf(own).forEachFlag([](uint64_t& flag) { flag = kFree; });
  };
  exchange.maps = [](int) { return true; };
  exchange.mapped = [&](int, ShmSegment& segment) {
    registrations_.push_back(
        std::make_unique<HostRegistration>(module, segment.data(), bytes));
  };
  exchangeSegments(oob, exchange, segments_);
}

// Flags, line area, slots, channels.
size_t DeviceOutboxes::slotsOffset() const {
  return kFlagBytes + pageAligned(2 * lowLatencyHalfLines_ * sizeof(uint64_t));
}

uint64_t* DeviceOutboxes::lowLatencyArea(int owner) const {
  return reinterpret_cast<uint64_t*>(
      static_cast<char*>(segments_[owner].data()) + kFlagBytes);
}

const uint64_t* DeviceOutboxes::releaseWord() const {
  return &flagsOf(segments_[rank_]).released.value;
}

char* DeviceOutboxes::slot(int owner, uint64_t chunk) const {
  return static_cast<char*>(segments_[owner].data()) + slotsOffset() +
         (chunk % kSlots) * slotBytes_;
}

uint64_t* DeviceOutboxes::slotFlag(int owner, uint64_t chunk,
                                   int reader) const {
  return &flagsOf(segments_[owner]).slot[chunk % kSlots][reader].value;
}

// A channel per other rank, in rank order, after the collectives' slots.
size_t DeviceOutboxes::channelOffset(int owner, int destination) const {
  const int index = destination < owner ? destination : destination - 1;
  return slotsOffset() + kSlots * slotBytes_ + index * kSlots * pairSlotBytes_;
}

char* DeviceOutboxes::pairSlot(int owner, int destination,
                               uint64_t chunk) const {
  return static_cast<char*>(segments_[owner].data()) +
         channelOffset(owner, destination) + (chunk % kSlots) * pairSlotBytes_;
}

uint64_t* DeviceOutboxes::pairFlag(int owner, int destination,
                                   uint64_t chunk) const {
  return &flagsOf(segments_[owner]).pair[destination][chunk % kSlots].value;
}

// Stops the keeper before the segments are unmapped.
DeviceOutboxes::~DeviceOutboxes() {
  {
    std::lock_guard<std::mutex> lock(keeperMutex_);
    stopping_ = true;
  }
  stopKeeper_.notify_all();
  if (keeper_.joinable()) keeper_.join();
}

void DeviceOutboxes::releaseWaits(bool failure) {
  OutboxFlags& own = flagsOf(segments_[rank_]);
  __atomic_store_n(failure ? &own.failed.value : &own.left.value, 1,
                   __ATOMIC_RELEASE);
  __atomic_store_n(&own.released.value, 1, __ATOMIC_RELEASE);
  raiseEveryFlag();
  if (failure) keepRaisingAfterFailure();
}

void DeviceOutboxes::raiseEveryFlag() {
  for (int r = 0; r < nranks_; ++r)
    flagsOf(segments_[r]).forEachFlag([](uint64_t& flag) {
      __atomic_store_n(&flag, kFree | kFilled | kResult, __ATOMIC_RELEASE);
    });
}

// Every millisecond, so that a replay blocked on a flag it wrote itself
// goes on within one (its results are undefined: the communicator failed).
void DeviceOutboxes::keepRaisingAfterFailure() {
  std::lock_guard<std::mutex> lock(keeperMutex_);
  if (keeper_.joinable() || stopping_) return;
  keeper_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(keeperMutex_);
    while (!stopKeeper_.wait_for(lock, std::chrono::milliseconds(1),
                                 [this] { return stopping_; }))
      raiseEveryFlag();
  });
}

bool DeviceOutboxes::left(int rank) const {
  return __atomic_load_n(&flagsOf(segments_[rank]).left.value,
                         __ATOMIC_ACQUIRE) != 0;
}

bool DeviceOutboxes::failed() const {
  for (int r = 0; r < nranks_; ++r)
    if (__atomic_load_n(&flagsOf(segments_[r]).failed.value,
                        __ATOMIC_ACQUIRE) != 0)
      return true;
  return false;
}

}  // namespace hetccl
