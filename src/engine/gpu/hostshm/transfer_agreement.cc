#include "engine/gpu/hostshm/transfer_agreement.h"

#include "op/call_disagreement.h"
#include "op/op_traits.h"
#include "util/monotonic_word.h"

namespace hetccl {
namespace {

using Direction = DeviceOutboxes::Direction;

Direction opposite(Direction direction) {
  return direction == DeviceOutboxes::kSending ? DeviceOutboxes::kReceiving
                                               : DeviceOutboxes::kSending;
}

}  // namespace

Direction directionOf(const Op& transfer) {
  return transfer.kind == OpKind::Send ? DeviceOutboxes::kSending
                                       : DeviceOutboxes::kReceiving;
}

void LaneWaits::require(int peer, Direction direction, uint64_t number) {
  if (byPeer_.size() <= static_cast<size_t>(peer)) byPeer_.resize(peer + 1);
  uint64_t& upTo = byPeer_[peer][direction];
  if (number > upTo) upTo = number;
}

uint64_t LaneWaits::upTo(int peer, Direction direction) const {
  return static_cast<size_t>(peer) < byPeer_.size() ? byPeer_[peer][direction]
                                                    : 0;
}

LaneWaits TransferAgreement::post(const std::vector<Op>& ops) {
  LaneWaits waits;
  for (const Op& op : ops) {
    if (!isPointToPoint(op.kind) || op.root == outboxes_.rank() ||
        op.sequence == 0)
      continue;
    if (!postOne(op)) waits.require(op.root, directionOf(op), op.sequence);
  }
  return waits;
}

// The pair's count of posts lives in the sender's outbox.
bool TransferAgreement::postOne(const Op& transfer) {
  const int self = outboxes_.rank(), peer = transfer.root;
  const Direction direction = directionOf(transfer);
  const bool sending = direction == DeviceOutboxes::kSending;
  const CallSignature mine = signatureOf(transfer);
  if (!posts_.post(
          outboxes_.postedTransfer(self, peer, direction, mine.sequence),
          outboxes_.transferAgreedWord(self, peer, direction),
          outboxes_.transferArrivals(sending ? self : peer,
                                     sending ? peer : self, mine.sequence),
          2, mine, "the peer to post its end of a send or receive"))
    return false;
  compareAndAgree(peer, direction, mine);
  return true;
}

// The peer's post is visible: it came before the count that this rank's
// completed.
void TransferAgreement::compareAndAgree(int peer, Direction direction,
                                        const CallSignature& mine) {
  const int self = outboxes_.rank();
  const Direction theirDirection = opposite(direction);
  const CallSignature& theirs =
      outboxes_.postedTransfer(peer, self, theirDirection, mine.sequence).call;
  if (!callsAgree(mine, theirs))
    throw callDisagreement(self, mine, peer, theirs);
  raiseToAtLeast(outboxes_.transferAgreedWord(self, peer, direction),
                 mine.sequence);
  raiseToAtLeast(outboxes_.transferAgreedWord(peer, self, theirDirection),
                 mine.sequence);
}

}  // namespace hetccl
