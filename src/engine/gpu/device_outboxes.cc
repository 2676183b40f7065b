#include "engine/gpu/device_outboxes.h"

#include <cstring>

#include "runtime/device/device_module.h"
#include "transport/shm/segment_exchange.h"
#include "util/error.h"

namespace hetccl {

// The counters at the start of each outbox; the slots follow. Each counter
// has a cache line of its own: different GPUs write them.
struct DeviceOutboxes::Counters {
  struct alignas(64) Counter {
    uint64_t value;
  };
  Counter staged;
  Counter reduced;
  Counter consumed[HETCCL_DEVICE_MAX_SOURCES];  // by reader
  Counter sent[HETCCL_DEVICE_MAX_SOURCES];      // by destination
  Counter taken[HETCCL_DEVICE_MAX_SOURCES];     // by destination
  Counter failed;  // 1 once the owner released the waits on a failure
};

namespace {

constexpr size_t kPage = 4096;

}  // namespace

DeviceOutboxes::DeviceOutboxes(Oob& oob, const DeviceModule& module,
                               size_t slotBytes, size_t pairSlotBytes)
    : rank_(oob.rank()),
      nranks_(oob.nranks()),
      slotBytes_(slotBytes),
      pairSlotBytes_(pairSlotBytes) {
  static_assert(sizeof(Counters) <= kPage, "outbox counters exceed a page");
  if (nranks_ > HETCCL_DEVICE_MAX_SOURCES)
    fail(ncclInternalError, "GPU outboxes take at most %d ranks",
         HETCCL_DEVICE_MAX_SOURCES);
  const size_t bytes =
      kPage + kSlots * (slotBytes_ + (nranks_ - 1) * pairSlotBytes_);
  SegmentExchange exchange;
  exchange.what = "GPU outboxes";
  exchange.namePrefix = "hetccl-gpu";
  exchange.ownBytes = [&] { return bytes; };
  // First touch here: the pages go to this process's memory node, near the
  // GPU that writes them, before any other rank maps them.
  exchange.format = [&](ShmSegment& own) { std::memset(own.data(), 0, bytes); };
  exchange.maps = [](int) { return true; };
  exchange.mapped = [&](int, ShmSegment& segment) {
    registrations_.push_back(
        std::make_unique<HostRegistration>(module, segment.data(), bytes));
  };
  exchangeSegments(oob, exchange, segments_);
}

DeviceOutboxes::Counters& DeviceOutboxes::counters(int owner) const {
  return *static_cast<Counters*>(segments_[owner].data());
}

char* DeviceOutboxes::slot(int owner, uint64_t chunk) const {
  return static_cast<char*>(segments_[owner].data()) + kPage +
         (chunk % kSlots) * slotBytes_;
}

// A channel per other rank, in rank order, after the collectives' slots.
size_t DeviceOutboxes::channelOffset(int owner, int destination) const {
  const int index = destination < owner ? destination : destination - 1;
  return kPage + kSlots * slotBytes_ + index * kSlots * pairSlotBytes_;
}

char* DeviceOutboxes::pairSlot(int owner, int destination,
                               uint64_t chunk) const {
  return static_cast<char*>(segments_[owner].data()) +
         channelOffset(owner, destination) + (chunk % kSlots) * pairSlotBytes_;
}

uint64_t* DeviceOutboxes::sent(int owner, int destination) const {
  return &counters(owner).sent[destination].value;
}

uint64_t* DeviceOutboxes::taken(int owner, int destination) const {
  return &counters(owner).taken[destination].value;
}

uint64_t* DeviceOutboxes::staged(int owner) const {
  return &counters(owner).staged.value;
}

uint64_t* DeviceOutboxes::reduced(int owner) const {
  return &counters(owner).reduced.value;
}

uint64_t* DeviceOutboxes::consumed(int owner, int reader) const {
  return &counters(owner).consumed[reader].value;
}

void DeviceOutboxes::releaseWaits(bool failure) {
  const uint64_t all = HETCCL_DEVICE_WAIT_RELEASED;
  if (failure)
    __atomic_store_n(&counters(rank_).failed.value, 1, __ATOMIC_RELEASE);
  for (int r = 0; r < nranks_; ++r) {
    Counters& box = counters(r);
    __atomic_store_n(&box.staged.value, all, __ATOMIC_RELEASE);
    __atomic_store_n(&box.reduced.value, all, __ATOMIC_RELEASE);
    for (auto* counters : {box.consumed, box.sent, box.taken})
      for (int i = 0; i < HETCCL_DEVICE_MAX_SOURCES; ++i)
        __atomic_store_n(&counters[i].value, all, __ATOMIC_RELEASE);
  }
}

bool DeviceOutboxes::failed() const {
  for (int r = 0; r < nranks_; ++r)
    if (__atomic_load_n(&counters(r).failed.value, __ATOMIC_ACQUIRE) != 0)
      return true;
  return false;
}

}  // namespace hetccl
