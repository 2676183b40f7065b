#include "engine/gpu/hostshm/device_shm_point_to_point.h"

#include <algorithm>

#include "algo/self_transfers.h"
#include "engine/gpu/hostshm/pipeline_steps.h"
#include "util/dtype.h"
#include "util/log.h"

namespace hetccl {
DeviceShmPointToPoint::DeviceShmPointToPoint(const DeviceOutboxes& outboxes,
                                             const DeviceModule& module)
    : outboxes_(outboxes),
      module_(module),
      rank_(outboxes.rank()),
      start_(module) {
  for (int peer = 0; peer < outboxes.nranks(); ++peer)
    peers_.push_back(peer == rank_ ? nullptr : std::make_unique<Peer>(module));
}

DeviceShmPointToPoint::~DeviceShmPointToPoint() {
  for (auto& peer : peers_) {
    if (!peer) continue;
    for (Lane* lane : {&peer->sending, &peer->receiving})
      if (int code = module_.api().streamSynchronize(lane->stream.handle()))
        LOG_WARN(kLogShm, "rank %d: GPU send/receive stream failed: %s", rank_,
                 module_.api().errorString(code));
  }
}

// Transfers to this rank itself are copies on the caller's stream; every
// lane the group uses starts after the caller's work and the caller's
// stream goes on after every such lane.
void DeviceShmPointToPoint::launch(const std::vector<Op>& ops, void* stream,
                                   const LaneWaits& waits) {
  const auto& api = module_.api();
  SelfTransfers self = splitSelfTransfers(rank_, ops);
  for (const SelfCopy& copy : self.copies)
    if (copy.bytes > 0)
      module_.check(api.copyAsync(copy.to, copy.from, copy.bytes, stream),
                    "copying a transfer of a rank to itself");
  start_.record(stream);
  std::vector<Lane*> used;
  for (const Op& op : self.others) {
    Peer& peer = *peers_.at(op.root);
    Lane& lane = op.kind == OpKind::Send ? peer.sending : peer.receiving;
    if (std::find(used.begin(), used.end(), &lane) == used.end()) {
      module_.check(api.streamWaitEvent(lane.stream.handle(), start_.handle()),
                    "ordering a transfer after the caller's work");
      used.push_back(&lane);
    }
    awaitAgreement(op, lane, waits);
    transfer(op, lane);
  }
  for (Lane* lane : used) {
    lane->done.record(lane->stream.handle());
    module_.check(api.streamWaitEvent(stream, lane->done.handle()),
                  "ordering the caller's work after a transfer");
  }
}

// Before each transfer up to the lane's last one whose agreement this
// rank has not seen (LaneWaits), the lane waits until the peer found it to
// agree: one wait per lane and group where a group has one transfer per
// lane. Not one wait for the last before the first: the peer may receive
// them one group at a time, synchronizing in between.
void DeviceShmPointToPoint::awaitAgreement(const Op& op, const Lane& lane,
                                           const LaneWaits& waits) {
  const DeviceOutboxes::Direction direction = directionOf(op);
  if (op.sequence == 0 || op.sequence > waits.upTo(op.root, direction)) return;
  module_.check(
      module_.api().waitValue64(
          lane.stream.handle(),
          outboxes_.transferAgreedWord(rank_, op.root, direction), op.sequence),
      "waiting until the peer posted the same sends and receives");
}

namespace {

// One end of a pair channel. For each chunk its stream waits until the
// slot's flag reads `awaited`, copies the chunk (into the slot on the
// sending end, out of it on the receiving end) and hands the slot to the
// other end by setting the flag to `handedOver`.
struct ChannelEnd {
  uint64_t awaited;
  uint64_t handedOver;
  const char* waiting;  // what each step does, for its error
  const char* copying;
  const char* signalling;
};

constexpr ChannelEnd kSendingEnd{DeviceOutboxes::kFree, DeviceOutboxes::kFilled,
                                 "waiting for a free slot of a send channel",
                                 "copying a sent chunk to host memory",
                                 "signalling a sent chunk"};
constexpr ChannelEnd kReceivingEnd{
    DeviceOutboxes::kFilled, DeviceOutboxes::kFree, "waiting for a sent chunk",
    "copying a received chunk to the GPU", "signalling a received chunk"};

}  // namespace

// One chunk per pipeline step of `op`'s buffer; the chunk's number in the
// lane's sequence picks its slot.
void DeviceShmPointToPoint::transfer(const Op& op, Lane& lane) {
  const bool sending = op.kind == OpKind::Send;
  const ChannelEnd& end = sending ? kSendingEnd : kReceivingEnd;
  const int owner = sending ? rank_ : op.root;
  const int destination = sending ? op.root : rank_;
  const auto& api = module_.api();
  void* stream = lane.stream.handle();
  const size_t bytes = op.count * dtypeSize(op.dtype);
  const size_t most = pipelineStepBytes(bytes, outboxes_.pairSlotBytes());
  for (size_t offset = 0; offset < bytes; offset += most, ++lane.chunks) {
    const size_t step = std::min(most, bytes - offset);
    char* slot = outboxes_.pairSlot(owner, destination, lane.chunks);
    uint64_t* flag = outboxes_.pairFlag(owner, destination, lane.chunks);
    module_.check(api.waitBits64(stream, flag, end.awaited), end.waiting);
    void* to = sending ? slot : static_cast<char*>(op.recvbuff) + offset;
    const void* from =
        sending ? static_cast<const char*>(op.sendbuff) + offset : slot;
    module_.check(api.copyAsync(to, from, step, stream), end.copying);
    module_.check(api.writeValue64(stream, flag, end.handedOver),
                  end.signalling);
  }
}

}  // namespace hetccl
