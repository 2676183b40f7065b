#include "engine/gpu/hostshm/signature_posts.h"

#include "util/spin_wait.h"

namespace hetccl {
namespace {

// An arrivals word holds the call's number and, in its low bits, how many
// posted it; the first post of a number starts the count again.
constexpr unsigned kCountBits = 8;
constexpr uint64_t kCountMask = (uint64_t(1) << kCountBits) - 1;

uint64_t load(const uint64_t* word) {
  return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

// True if this post of call `number` was the `posters`-th.
bool arriveLast(uint64_t* arrivals, uint64_t number, int posters) {
  uint64_t seen = load(arrivals), next;
  do {
    next =
        (seen >> kCountBits) == number ? seen + 1 : (number << kCountBits) | 1;
  } while (!__atomic_compare_exchange_n(arrivals, &seen, next, /*weak=*/true,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
  return static_cast<int>(next & kCountMask) == posters;
}

}  // namespace

// The signature before its number, and both before the count: the rank
// that completes the count sees them.
bool SignaturePosts::post(DeviceOutboxes::PostedCall& slot,
                          const uint64_t* agreed, uint64_t* arrivals,
                          int posters, const CallSignature& call,
                          const char* awaited) const {
  awaitFreeSlot(slot, agreed, call.sequence, awaited);
  slot.call = call;
  __atomic_store_n(&slot.number, call.sequence, __ATOMIC_RELEASE);
  return arriveLast(arrivals, call.sequence, posters);
}

// The slot's earlier call must have been compared: every poster made it.
void SignaturePosts::awaitFreeSlot(const DeviceOutboxes::PostedCall& slot,
                                   const uint64_t* agreed, uint64_t number,
                                   const char* awaited) const {
  SpinWait wait(abort_, nullptr, timeoutSeconds_, awaited, -1);
  for (;;) {
    const uint64_t earlier = load(&slot.number);
    if (earlier == 0 || earlier >= number || load(agreed) >= earlier) return;
    const int failed = outboxes_.failedRank();
    if (failed >= 0) throw outboxes_.failureOf(failed);
    wait.pause();
  }
}

}  // namespace hetccl
