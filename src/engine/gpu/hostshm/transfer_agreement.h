// Catches two GPU ranks of one host whose send and receive do not match
// (another count or type: the links' rule, callsAgree) before the
// receiver's stream copies a chunk of the wrong meaning, or either stream
// reports the transfer done. The channels carry no header, so each end
// posts the transfer's signature in its outbox when it enqueues it, in a
// ring per peer and direction (Op::sequence numbers a pair's transfers in
// each direction). The end whose post comes second compares the send with
// the receive and, if they agree, raises both ends' agreement words of
// that direction and enqueues its part; the end that posted first makes
// its lane's stream wait for its word before the lane touches the channel
// for that transfer (one wait per lane and group where a group has one
// transfer per lane). If they differ, the second end's call fails with
// ncclInvalidUsage naming both calls and enqueues nothing; the engine
// marks the rank failed, so the first end, whose stream stays blocked
// until its abort, reports the same (LaunchWatch).
//
// Like CallAgreement it runs on the enqueuing threads and costs a few
// stores and one atomic per transfer.
#pragma once

#include <array>
#include <vector>

#include "engine/gpu/hostshm/device_outboxes.h"
#include "engine/gpu/hostshm/signature_posts.h"
#include "op/op.h"
#include "util/abort_signal.h"

namespace hetccl {

// The lane of its rank's end that a send or receive takes.
DeviceOutboxes::Direction directionOf(const Op& transfer);

// How far each lane of a group (a peer and direction) waits for its
// agreement word: up to the highest of its transfers whose agreement this
// rank has not seen (0: none, no wait).
class LaneWaits {
 public:
  void require(int peer, DeviceOutboxes::Direction direction, uint64_t number);
  uint64_t upTo(int peer, DeviceOutboxes::Direction direction) const;

 private:
  std::vector<std::array<uint64_t, 2>> byPeer_;
};

class TransferAgreement {
 public:
  TransferAgreement(DeviceOutboxes& outboxes, const AbortSignal& abort,
                    double timeoutSeconds)
      : outboxes_(outboxes), posts_(outboxes, abort, timeoutSeconds) {}

  // Posts each send and receive of `ops` with another rank, in order,
  // and says what the lanes must wait for. Throws ncclInvalidUsage at the
  // first that disagrees with its peer's end. Ops numbered 0 (the
  // engine's own tests) are not checked.
  LaneWaits post(const std::vector<Op>& ops);

 private:
  // True if the peer's end was posted already and agrees.
  bool postOne(const Op& transfer);
  void compareAndAgree(int peer, DeviceOutboxes::Direction direction,
                       const CallSignature& mine);

  DeviceOutboxes& outboxes_;
  const SignaturePosts posts_;
};

}  // namespace hetccl
