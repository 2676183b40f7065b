// HETCCL_CHECK_CALLS=1 for communicators that hand every call to the
// vendor library (NVIDIA's NCCL, AMD's RCCL). Nothing of HetCCL's own
// meets on their data path, so before a launch reaches the library the
// ranks compare what they called over the bootstrap: the collectives of a
// launch by an all-gather of one record per rank, each send or receive
// with the receive or send it meets by a message to that peer. Calls that
// disagree fail with ncclInvalidUsage naming both calls before the library
// sees them; the library would otherwise combine buffers of different
// meaning, or wait forever.
//
// The cost is a host round trip per launch (the ranks' calling threads
// meet), which is why it is off by default: docs/architecture.md has the
// measured figure. Captured launches are checked at capture; replays
// repeat what was checked.
#pragma once

#include <vector>

#include "op/call_signature.h"
#include "op/op.h"

namespace hetccl {

class Bootstrap;

class PassThroughCallCheck {
 public:
  explicit PassThroughCallCheck(Bootstrap& bootstrap) : bootstrap_(bootstrap) {}

  // Sends the signature of each send and receive of `ops` to its peer.
  // Never waits for another rank: a thread that drives several
  // communicators posts for all of them before it verifies any.
  void post(const std::vector<Op>& ops);
  // Waits for the other ranks' side of `ops` (posted first) and compares.
  // Throws Error(ncclInvalidUsage) naming both calls where they differ.
  void verify(const std::vector<Op>& ops);

 private:
  void verifyCollectives(const std::vector<CallSignature>& mine);
  void verifyTransfer(const CallSignature& mine);

  Bootstrap& bootstrap_;
};

}  // namespace hetccl
