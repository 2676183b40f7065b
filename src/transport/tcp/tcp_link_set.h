// The tcp transport's links: between ranks of different domains over several
// TCP connections per peer pair, for hosts without RDMA. Created
// collectively by every rank of a communicator.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "transport/link.h"
#include "transport/tcp/tcp_progress_thread.h"
#include "transport/tcp/tcp_settings.h"
#include "transport/transport.h"
#include "util/abort_signal.h"
#include "util/oob.h"

namespace hetccl {

class TcpLinkSet : public LinkSet {
 public:
  // Collective over `oob` (every rank calls it, even one without peers).
  // `peers` are the ranks this rank needs links to; the relation must be
  // symmetric. Listens on chooseLocalAddress() (HETCCL_SOCKET_IFNAME),
  // all-gathers the listen addresses and rank 0's secret and stripe
  // geometry, then connects HETCCL_TCP_SOCKETS sockets per pair. Throws
  // ncclSystemError naming the missing peers if that takes longer than
  // `setupTimeoutSeconds` (0: no limit), and when `abort` is raised.
  // `calls` (may be null) are this rank's, which unclaimed stripes are
  // compared with.
  TcpLinkSet(Oob& oob, const std::vector<int>& peers,
             const TcpSettings& settings, double setupTimeoutSeconds,
             std::shared_ptr<AbortSignal> abort,
             std::shared_ptr<const CallLog> calls = nullptr);
  // Stops the progress threads and closes every connection; transfers still
  // pending fail.
  ~TcpLinkSet() override;
  TcpLinkSet(const TcpLinkSet&) = delete;
  TcpLinkSet& operator=(const TcpLinkSet&) = delete;

  // The link to `peer`; throws ncclInvalidArgument if it is not a peer.
  std::shared_ptr<Link> link(int peer) const override;
  // The settings in force: this rank's buffer size and polling, rank 0's
  // socket count, thread count and stripe size.
  const TcpSettings& settings() const { return settings_; }

 private:
  const int rank_;
  TcpSettings settings_;
  std::vector<std::shared_ptr<TcpProgressThread>> lanes_;  // a thread each
  std::map<int, std::shared_ptr<Link>> links_;
};

}  // namespace hetccl
