// Catches GPU ranks of one host that call different collectives before
// their streams combine buffers of different meaning. Each rank posts its
// call's signature in its outbox when it enqueues the call; the rank whose
// post completes the set compares them all and, if they agree, raises
// every rank's `agreed` word and enqueues its own work. The pipelined
// streams wait for that word before they read another rank's data; the
// low-latency kernel need not: it ends only once it has read every other
// rank's kernel of the same operation, and the last rank's kernel exists
// only if the calls agree. If they differ, that rank's call fails with
// ncclInvalidUsage naming both calls, enqueues nothing and marks itself
// failed, so the other ranks, whose streams stay blocked, report the same
// error (LaunchWatch) until abort releases them.
//
// The check runs on the enqueuing threads, where the calls are known: it
// costs a few stores and one atomic add per collective, and the pipelined
// streams one wait that is satisfied by the time they reach it unless a
// rank is late to make its call.
#pragma once

#include "engine/gpu/hostshm/device_outboxes.h"
#include "engine/gpu/hostshm/signature_posts.h"
#include "op/call_signature.h"
#include "util/abort_signal.h"

namespace hetccl {

class CallAgreement {
 public:
  CallAgreement(DeviceOutboxes& outboxes, const AbortSignal& abort,
                double timeoutSeconds)
      : outboxes_(outboxes), posts_(outboxes, abort, timeoutSeconds) {}

  // Posts this rank's call (its sequence the collective's number). Waits
  // while this rank's slot of the ring still holds a call kCallRing
  // collectives older that not every rank has made yet. True if every
  // rank's call is known to agree already (this rank's post completed the
  // set): then the streams need not wait for it.
  bool post(const CallSignature& call);

 private:
  void compareAndAgree(const CallSignature& mine);

  DeviceOutboxes& outboxes_;
  const SignaturePosts posts_;
};

}  // namespace hetccl
