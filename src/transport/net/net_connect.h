// How the ranks of a net link set open their connections: each rank
// listens once, the handles go round the out-of-band all-gather, and each
// rank then connects to every peer's handle (its send comm to that peer)
// and accepts one connection from every peer (its receive comm), all
// polled, since the ABI lets neither connect nor accept block. The first
// message on each connection is a hello naming the sender, because one
// listen comm accepts every peer's connection, in whatever order they
// come.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>

#include "transport/net/net_handles.h"
#include "util/abort_signal.h"

namespace hetccl {

using NetListenHandle = std::array<uint8_t, HETCCL_NET_MODULE_HANDLE_BYTES>;

// Both connections with one peer.
struct NetPeerComms {
  NetComm send;
  NetComm receive;
};

struct NetConnectPlan {
  int rank = 0;
  uint32_t linkSet = 0;
  int device = 0;  // this rank's device (rail) the connections leave from
  // Each peer's listen handle.
  std::map<int, NetListenHandle> peers;
  double timeoutSeconds = 0;  // 0: no limit
};

// Connects to every peer of `plan` and accepts each one's connection on
// `listen`. Throws the plugin's error (naming the call), ncclRemoteError
// when the time runs out (naming the peers still missing), the abort's
// reason, or ncclSystemError once `stopRequested` (the link set is going).
std::map<int, NetPeerComms> connectNetPeers(
    const NetContext& context, const NetComm& listen,
    const NetConnectPlan& plan, const AbortSignal& abort,
    const std::atomic<bool>& stopRequested);

}  // namespace hetccl
