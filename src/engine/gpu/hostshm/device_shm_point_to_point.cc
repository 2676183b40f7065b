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
    if (op.kind == OpKind::Send)
      send(op, lane);
    else
      receive(op, lane);
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

// Calls step(offset, bytes, chunk) for each pipeline step of `op`'s
// buffer, `chunk` being the step's number in the lane's sequence.
template <typename Step>
void DeviceShmPointToPoint::forEachStep(const Op& op, Lane& lane, Step step) {
  const size_t bytes = op.count * dtypeSize(op.dtype);
  const size_t most = pipelineStepBytes(bytes, outboxes_.pairSlotBytes());
  for (size_t offset = 0; offset < bytes; offset += most, ++lane.chunks)
    step(offset, std::min(most, bytes - offset), lane.chunks);
}

void DeviceShmPointToPoint::send(const Op& op, Lane& lane) {
  const auto& api = module_.api();
  void* stream = lane.stream.handle();
  const int peer = op.root;
  forEachStep(op, lane, [&](size_t offset, size_t bytes, uint64_t chunk) {
    uint64_t* flag = outboxes_.pairFlag(rank_, peer, chunk);
    module_.check(api.waitBits64(stream, flag, DeviceOutboxes::kFree),
                  "waiting for a free slot of a send channel");
    module_.check(api.copyAsync(outboxes_.pairSlot(rank_, peer, chunk),
                                static_cast<const char*>(op.sendbuff) + offset,
                                bytes, stream),
                  "copying a sent chunk to host memory");
    module_.check(api.writeValue64(stream, flag, DeviceOutboxes::kFilled),
                  "signalling a sent chunk");
  });
}

void DeviceShmPointToPoint::receive(const Op& op, Lane& lane) {
  const auto& api = module_.api();
  void* stream = lane.stream.handle();
  const int peer = op.root;
  forEachStep(op, lane, [&](size_t offset, size_t bytes, uint64_t chunk) {
    uint64_t* flag = outboxes_.pairFlag(peer, rank_, chunk);
    module_.check(api.waitBits64(stream, flag, DeviceOutboxes::kFilled),
                  "waiting for a sent chunk");
    module_.check(
        api.copyAsync(static_cast<char*>(op.recvbuff) + offset,
                      outboxes_.pairSlot(peer, rank_, chunk), bytes, stream),
        "copying a received chunk to the GPU");
    module_.check(api.writeValue64(stream, flag, DeviceOutboxes::kFree),
                  "signalling a received chunk");
  });
}

}  // namespace hetccl
