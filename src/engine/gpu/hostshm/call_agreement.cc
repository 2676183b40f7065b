#include "engine/gpu/hostshm/call_agreement.h"

#include "util/error.h"
#include "util/monotonic_word.h"

namespace hetccl {

bool CallAgreement::post(const CallSignature& call) {
  const int self = outboxes_.rank();
  if (!posts_.post(outboxes_.postedCall(self, call.sequence),
                   outboxes_.agreedWord(self),
                   outboxes_.arrivals(call.sequence), outboxes_.nranks(), call,
                   "the other GPU ranks of this host to make a call"))
    return false;
  compareAndAgree(call);
  return true;
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
