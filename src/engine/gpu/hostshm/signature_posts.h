// What the GPU ranks' call checks share (CallAgreement for collectives,
// TransferAgreement for sends and receives): a rank posts its call's
// signature in a ring of its outbox and counts its post in a word that the
// ranks that must agree share; the post that completes the count is the
// one whose rank compares. A slot of the ring is written again only once
// the call it holds was agreed on, since until then the comparing rank may
// still read it.
#pragma once

#include "engine/gpu/hostshm/device_outboxes.h"
#include "op/call_signature.h"
#include "util/abort_signal.h"

namespace hetccl {

class SignaturePosts {
 public:
  SignaturePosts(const DeviceOutboxes& outboxes, const AbortSignal& abort,
                 double timeoutSeconds)
      : outboxes_(outboxes), abort_(abort), timeoutSeconds_(timeoutSeconds) {}

  // Writes `call` in `slot` of this rank's ring once the slot's earlier
  // call was agreed on (`agreed` reached its number), waiting for that as
  // `awaited` says (for a timeout's message), and counts the post in
  // `arrivals`. True if the post was the last of `posters`: then this
  // rank compares. Throws the failure of a rank that failed meanwhile.
  bool post(DeviceOutboxes::PostedCall& slot, const uint64_t* agreed,
            uint64_t* arrivals, int posters, const CallSignature& call,
            const char* awaited) const;

 private:
  void awaitFreeSlot(const DeviceOutboxes::PostedCall& slot,
                     const uint64_t* agreed, uint64_t number,
                     const char* awaited) const;

  const DeviceOutboxes& outboxes_;
  const AbortSignal& abort_;
  const double timeoutSeconds_;
};

}  // namespace hetccl
