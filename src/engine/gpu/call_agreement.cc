#include "engine/gpu/call_agreement.h"

#include "util/error.h"
#include "util/monotonic_word.h"
#include "util/spin_wait.h"

namespace hetccl {
namespace {

constexpr unsigned kCountBits = 8;
constexpr uint64_t kCountMask = (uint64_t(1) << kCountBits) - 1;

uint64_t load(const uint64_t* word) {
  return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

}  // namespace

bool CallAgreement::post(const CallSignature& call) {
  awaitFreeSlot(call.sequence);
  DeviceOutboxes::PostedCall& slot =
      outboxes_.postedCall(outboxes_.rank(), call.sequence);
  slot.call = call;
  __atomic_store_n(&slot.number, call.sequence, __ATOMIC_RELEASE);
  if (!arriveLast(call.sequence)) return false;
  compareAndAgree(call);
  return true;
}

// The slot's earlier call must have been compared: every rank made it.
void CallAgreement::awaitFreeSlot(uint64_t number) {
  const DeviceOutboxes::PostedCall& slot =
      outboxes_.postedCall(outboxes_.rank(), number);
  const uint64_t* agreed = outboxes_.agreedWord(outboxes_.rank());
  SpinWait wait(abort_, nullptr, timeoutSeconds_,
                "the other GPU ranks of this host to make a call", -1);
  for (;;) {
    const uint64_t earlier = load(&slot.number);
    if (earlier == 0 || earlier >= number || load(agreed) >= earlier) return;
    const int failed = outboxes_.failedRank();
    if (failed >= 0) throw outboxes_.failureOf(failed);
    wait.pause();
  }
}

bool CallAgreement::arriveLast(uint64_t number) {
  uint64_t* arrivals = outboxes_.arrivals(number);
  uint64_t seen = load(arrivals), next;
  do {
    next =
        (seen >> kCountBits) == number ? seen + 1 : (number << kCountBits) | 1;
  } while (!__atomic_compare_exchange_n(arrivals, &seen, next, /*weak=*/true,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
  return static_cast<int>(next & kCountMask) == outboxes_.nranks();
}

// Every other rank's post is visible: each came before the count that this
// rank's completed.
void CallAgreement::compareAndAgree(const CallSignature& mine) {
  const int self = outboxes_.rank();
  for (int r = 0; r < outboxes_.nranks(); ++r) {
    if (r == self) continue;
    const CallSignature& theirs = outboxes_.postedCall(r, mine.sequence).call;
    if (!callsAgree(theirs, mine))
      fail(ncclInvalidUsage, "%s",
           describeDisagreement(self, mine, r, theirs).c_str());
  }
  for (int r = 0; r < outboxes_.nranks(); ++r)
    raiseToAtLeast(outboxes_.agreedWord(r), mine.sequence);
}

}  // namespace hetccl
