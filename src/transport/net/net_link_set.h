// The net transport's links: one progress thread per rail (a device of
// the plugin this rank uses, net_devices.h) that owns the plugin's comms
// with every peer on that rail, connected through the listen handles that
// every rank contributes to the out-of-band all-gather. A link with a peer
// has as many lanes as the one of the two with fewer rails: lane k joins
// each end's k-th rail. Created collectively by every rank.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "op/call_log.h"
#include "transport/net/net_devices.h"
#include "transport/net/net_library.h"
#include "transport/net/net_progress_thread.h"
#include "transport/net/net_settings.h"
#include "transport/transport.h"
#include "util/abort_signal.h"
#include "util/oob.h"

namespace hetccl {

class NetLinkSet : public LinkSet {
 public:
  // Collective over `oob` (every rank calls it, even one without peers).
  // Only ranks with peers load the plugin (`library`, or the process's,
  // netLibrary(), when null); when no rank has any, nothing is loaded. Throws
  // on every rank if a rank with peers cannot use the plugin or connect (naming
  // the rank and, on that rank, why). Rank 0's part size applies to every rank,
  // cut to the smallest maxP2pBytes of any device used. `slot`: where this
  // rank sits among its host's ranks, for HETCCL_NET_DEVICES=auto.
  // `gpuModule`: the rank's GPU's (null for a CPU rank), whose buffers go
  // to devices of DMA-BUF through it.
  // `setupTimeoutSeconds` bounds connecting (0: no limit).
  NetLinkSet(Oob& oob, const std::vector<int>& peers,
             std::shared_ptr<AbortSignal> abort, NetSettings settings,
             double setupTimeoutSeconds,
             std::shared_ptr<const CallLog> calls = nullptr,
             const NetLibrary* library = nullptr, HostSlot slot = {},
             const DeviceModule* gpuModule = nullptr);
  // Stops the progress thread; pending transfers fail.
  ~NetLinkSet() override;

  std::shared_ptr<Link> link(int peer) const override;

 private:
  const int rank_;
  std::vector<std::shared_ptr<NetProgressThread>> rails_;
  std::map<int, std::shared_ptr<Link>> links_;
};

}  // namespace hetccl
