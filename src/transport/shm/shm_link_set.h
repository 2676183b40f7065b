// The shm transport's links: between ranks of different domains on one host,
// through shared memory. Created collectively by every rank of a
// communicator. Each rank creates one segment with an outgoing ring per
// peer (HETCCL_SHM_LINK_SLOTS slots of HETCCL_SHM_LINK_CHUNK bytes) and the
// counters it writes; the segment names are all-gathered, each rank maps
// its peers' segments, and after a second all-gather (everyone has mapped
// what it needs) the names are unlinked, so nothing can leak in /dev/shm.
// The buffers given to the links must be host memory: the transport copies
// with the CPU.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "transport/link.h"
#include "transport/shm/shm_link_layout.h"
#include "transport/shm/shm_link_progress.h"
#include "transport/transport.h"
#include "util/abort_signal.h"
#include "util/oob.h"
#include "util/peer_liveness.h"

namespace hetccl {

class ShmLinkSet : public LinkSet {
 public:
  // Collective over `oob`: every rank calls it, even one without peers.
  // `peers` are the ranks this rank needs links to, all on this host; the
  // relation must be symmetric. A failure on any rank (asymmetric peers,
  // /dev/shm full) makes the constructor throw on every rank. `abort` ends
  // every wait; `liveness` ends the waits of transfers whose peer exited;
  // either may be null (a signal that is never raised). `settings` is this
  // rank's ring geometry; ranks may differ: each direction uses its
  // sender's. `calls` (may be null) are this rank's, for poll().
  // `hostRanks`: how many ranks this host has, for the settings' choice of
  // a progress thread (ShmLinkSettings::usesProgressThread).
  ShmLinkSet(Oob& oob, const std::vector<int>& peers,
             const ShmLinkSettings& settings,
             std::shared_ptr<AbortSignal> abort,
             std::shared_ptr<const PeerLiveness> liveness,
             std::shared_ptr<const CallLog> calls = nullptr, int hostRanks = 1);
  ShmLinkSet(const ShmLinkSet&) = delete;
  ShmLinkSet& operator=(const ShmLinkSet&) = delete;

  // The link to `peer`; throws ncclInvalidArgument if it is not a peer.
  std::shared_ptr<Link> link(int peer) const override;
  void poll() override { engine_->poll(); }
  // This rank's ring geometry (for its sends).
  const ShmLinkSettings& settings() const { return settings_; }

 private:
  const int rank_;
  const ShmLinkSettings settings_;
  std::shared_ptr<ShmLinkProgress> engine_;
  std::map<int, std::shared_ptr<Link>> links_;
};

}  // namespace hetccl
