#include "engine/gpu/hostshm/device_outboxes.h"

#include <chrono>
#include <cstdio>
#include <cstring>

#include "runtime/device/device_module.h"
#include "runtime/device/low_latency_lines.h"
#include "shm/segment_exchange.h"
#include "shm/shm_room.h"
#include "util/error.h"
#include "util/monotonic_word.h"

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
  Flag failed;     // the owner's error code once it failed (or released)
  Flag left;       // 1 once the owner left after its work
  Flag completed;  // collective launches the owner completed, when it left
  Flag released;   // 1 once the owner released its waits
  // Collectives up to this number: every rank called the same (written by
  // the rank whose call completed the set, CallAgreement).
  Flag agreed;
  // Rank 0's only: per call of the ring, (number << 8) | ranks that posted.
  Flag arrivals[DeviceOutboxes::kCallRing];
  DeviceOutboxes::PostedCall calls[DeviceOutboxes::kCallRing];
  // Per peer, its lanes' words: the transfers both ends agreed on.
  Flag transferAgreed[HETCCL_DEVICE_MAX_SOURCES][2];
  // Sends to each destination: per transfer of the ring, (number << 8) |
  // ends that posted. Two ranks meet on each word, once per transfer:
  // unpadded.
  uint64_t transferArrivals[HETCCL_DEVICE_MAX_SOURCES]
                           [DeviceOutboxes::kTransferRing];
  DeviceOutboxes::PostedCall transfers[HETCCL_DEVICE_MAX_SOURCES][2]
                                      [DeviceOutboxes::kTransferRing];
  char failure[DeviceOutboxes::kFailureBytes];  // why it failed, when it did

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

// The message first: a rank that sees the code sees the message with it.
// Only the first failure is kept.
void DeviceOutboxes::markFailed(ncclResult_t code, const std::string& why) {
  OutboxFlags& own = flagsOf(segments_[rank_]);
  std::lock_guard<std::mutex> lock(keeperMutex_);
  if (__atomic_load_n(&own.failed.value, __ATOMIC_ACQUIRE) != 0) return;
  std::snprintf(own.failure, sizeof(own.failure), "%s", why.c_str());
  __atomic_store_n(&own.failed.value,
                   code == ncclSuccess ? ncclSystemError : code,
                   __ATOMIC_RELEASE);
}

Error DeviceOutboxes::failureOf(int rank) const {
  const OutboxFlags& theirs = flagsOf(segments_[rank]);
  const uint64_t code = __atomic_load_n(&theirs.failed.value, __ATOMIC_ACQUIRE);
  return Error(static_cast<ncclResult_t>(code),
               std::string(theirs.failure,
                           strnlen(theirs.failure, sizeof(theirs.failure))));
}

DeviceOutboxes::PostedCall& DeviceOutboxes::postedCall(int owner,
                                                       uint64_t number) const {
  return flagsOf(segments_[owner]).calls[number % kCallRing];
}

uint64_t* DeviceOutboxes::arrivals(uint64_t number) const {
  return &flagsOf(segments_[0]).arrivals[number % kCallRing].value;
}

uint64_t* DeviceOutboxes::agreedWord(int owner) const {
  return &flagsOf(segments_[owner]).agreed.value;
}

DeviceOutboxes::PostedCall& DeviceOutboxes::postedTransfer(
    int owner, int peer, Direction direction, uint64_t number) const {
  return flagsOf(segments_[owner])
      .transfers[peer][direction][number % kTransferRing];
}

uint64_t* DeviceOutboxes::transferAgreedWord(int owner, int peer,
                                             Direction direction) const {
  return &flagsOf(segments_[owner]).transferAgreed[peer][direction].value;
}

uint64_t* DeviceOutboxes::transferArrivals(int sender, int receiver,
                                           uint64_t number) const {
  return &flagsOf(segments_[sender])
              .transferArrivals[receiver][number % kTransferRing];
}

// The count first: a rank that sees `left` sees the count with it.
void DeviceOutboxes::markLeft(uint64_t collectiveLaunches) {
  OutboxFlags& own = flagsOf(segments_[rank_]);
  __atomic_store_n(&own.completed.value, collectiveLaunches, __ATOMIC_RELAXED);
  __atomic_store_n(&own.left.value, 1, __ATOMIC_RELEASE);
}

void DeviceOutboxes::releaseWaits() {
  markFailed(ncclSystemError,
             "it released its waits (abort, destroy, revoke or exit)");
  __atomic_store_n(&flagsOf(segments_[rank_]).released.value, 1,
                   __ATOMIC_RELEASE);
  raiseOwnWaits();
  keepRaising();
}

// Only this rank's waits: the bit its own waits take on each flag, never
// one that another rank waits for. It waits as an owner for kFree on its
// own outbox's flags, and as a reader for kFilled or kResult on its column
// of the others' (its channels' flags alike); the others wait for the
// opposite bits on those flags, so they stay where they are. Its agreement
// words are its own: only its streams wait on them.
void DeviceOutboxes::raiseOwnWaits() {
  auto raise = [](uint64_t& flag, uint64_t bits) {
    __atomic_fetch_or(&flag, bits | kReleasedBit, __ATOMIC_ACQ_REL);
  };
  OutboxFlags& own = flagsOf(segments_[rank_]);
  own.forEachFlag([&](uint64_t& flag) { raise(flag, kFree); });
  raiseToAtLeast(&own.agreed.value, kReleasedBit);
  for (auto& lanes : own.transferAgreed)
    for (auto& lane : lanes) raiseToAtLeast(&lane.value, kReleasedBit);
  for (int owner = 0; owner < nranks_; ++owner) {
    if (owner == rank_) continue;
    OutboxFlags& theirs = flagsOf(segments_[owner]);
    for (auto& bySlot : theirs.slot)
      raise(bySlot[rank_].value, kFilled | kResult);
    for (auto& flag : theirs.pair[rank_]) raise(flag.value, kFilled);
  }
}

// Every millisecond, so that a replay blocked on a flag it wrote itself
// goes on within one (its results are undefined).
void DeviceOutboxes::keepRaising() {
  std::lock_guard<std::mutex> lock(keeperMutex_);
  if (keeper_.joinable() || stopping_) return;
  keeper_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(keeperMutex_);
    while (!stopKeeper_.wait_for(lock, std::chrono::milliseconds(1),
                                 [this] { return stopping_; }))
      raiseOwnWaits();
  });
}

bool DeviceOutboxes::left(int rank) const {
  return __atomic_load_n(&flagsOf(segments_[rank]).left.value,
                         __ATOMIC_ACQUIRE) != 0;
}

uint64_t DeviceOutboxes::collectivesCompletedBy(int rank) const {
  return __atomic_load_n(&flagsOf(segments_[rank]).completed.value,
                         __ATOMIC_RELAXED);
}

int DeviceOutboxes::failedRank() const {
  int lowest = -1;
  for (int r = 0; r < nranks_; ++r) {
    const uint64_t code =
        __atomic_load_n(&flagsOf(segments_[r]).failed.value, __ATOMIC_ACQUIRE);
    if (code == ncclInvalidUsage) return r;
    if (code != 0 && lowest < 0) lowest = r;
  }
  return lowest;
}

}  // namespace hetccl
