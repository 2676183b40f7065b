// Stall reports: which peer an operation waits for, said while it waits.
// Once a wait for a peer in a collective (op/waiting_call.h: the
// cross-domain plans' waits, the GPU engine proxy's, the host domain's
// waits for its peers) has lasted HETCCL_STALL_WARN seconds, this rank
// logs a WARN line naming the call, the peer, its domain, host and link
// (or the domain's step), then again each time the same wait has lasted
// twice as long, so that a job that hangs says who it waits for without a
// debugger, and a slow one says so once. Checked on the call probe's
// thread (core/call_probe.h), which looks at the waits anyway, or in a
// communicator of one domain on the stall watch's (core/stall_watch.h).
// When the peer waited for said it waits for another rank itself (the
// probe's relay), the line names that rank too: a chain of waits ends at
// the rank that stopped, whichever rank the line's own wait is for.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/wait_description.h"
#include "op/call_log.h"
#include "op/waiting_call.h"

namespace hetccl {

class StallReport {
 public:
  // `warnSeconds`: HETCCL_STALL_WARN (0: never). `names`: how to name
  // the ranks it may wait for and the legs.
  StallReport(int rank, double warnSeconds,
              std::shared_ptr<const WaitDescription> names,
              std::shared_ptr<const CallLog> calls);

  // Logs what `waiting` has waited for long enough, if anything; returns
  // the line logged now, if any. `relayed` (may be null): what the peers
  // said they wait for themselves.
  std::optional<std::string> check(const WaitingCall& waiting,
                                   const RelayedWaits* relayed = nullptr);

 private:
  std::string describeOp(uint64_t sequence) const;

  const int rank_;
  const double warnSeconds_;
  const std::shared_ptr<const WaitDescription> names_;
  const std::shared_ptr<const CallLog> calls_;
  // The wait reported last, and how long it must last for the next line.
  std::optional<WaitingCall::Stall> reported_;
  double nextWarnSeconds_ = 0;
};

}  // namespace hetccl
