// Sends and receives among GPU ranks of one host driven by their streams
// (no CPU thread on the data path), through the channels of the ranks'
// outboxes (DeviceOutboxes). Per chunk, the sender's stream waits until
// the channel's next slot is free, copies the chunk into it and marks it
// filled; the receiver's stream waits until it is filled, copies the chunk
// out and marks it free again.
//
// Each direction of each pair of ranks has a stream of its own on both
// ends (a sending stream per destination, a receiving stream per source),
// so a transfer waits for nothing but its own peer: a group completes
// whatever order its ranks posted their sends and receives in. A rank's
// sends to one peer match that peer's receives from it in posting order,
// as in NCCL, and must be of the same size and type: a lane whose
// transfers' agreement this rank has not seen (TransferAgreement) first
// waits for it.
#pragma once

#include <memory>
#include <vector>

#include "engine/gpu/hostshm/device_outboxes.h"
#include "engine/gpu/hostshm/transfer_agreement.h"
#include "op/op.h"
#include "runtime/device/device_resources.h"

namespace hetccl {

class DeviceShmPointToPoint {
 public:
  DeviceShmPointToPoint(const DeviceOutboxes& outboxes,
                        const DeviceModule& module);
  // The GPU must be done with the outboxes before they are unregistered.
  ~DeviceShmPointToPoint();

  // Enqueues a group of sends and receives (nothing else) after the work
  // on `stream`; work enqueued on it later runs after all of them. Each
  // lane starts once its agreement word reaches what `waits` says.
  void launch(const std::vector<Op>& ops, void* stream, const LaneWaits& waits);

 private:
  // One direction of the channel with one peer, on this rank's end.
  struct Lane {
    explicit Lane(const DeviceModule& module) : stream(module), done(module) {}
    DeviceStream stream;
    DeviceEvent done;
    uint64_t chunks = 0;  // sent (received) so far: picks the next slot
  };
  struct Peer {
    explicit Peer(const DeviceModule& module)
        : sending(module), receiving(module) {}
    Lane sending;
    Lane receiving;
  };

  void awaitAgreement(const Op& op, const Lane& lane, const LaneWaits& waits);
  // Enqueues a send or a receive on its lane.
  void transfer(const Op& op, Lane& lane);

  const DeviceOutboxes& outboxes_;
  const DeviceModule& module_;
  const int rank_;
  DeviceEvent start_;
  std::vector<std::unique_ptr<Peer>> peers_;  // by rank; none for this one
};

}  // namespace hetccl
