// The links from this rank to every rank of another domain: each peer gets
// the transport the selection (HETCCL_TRANSPORT) picks for it; by default
// shm on the same host, and between hosts ucx where UCX has RDMA, else tcp.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "algo/domains.h"
#include "algo/pieced_link.h"
#include "algo/plan_settings.h"
#include "algo/transport_choice.h"
#include "op/waiting_call.h"
#include "transport/transport.h"
#include "util/peer_liveness.h"

namespace hetccl {

class CrossDomainLinks {
 public:
  // Collective over `oob` (the whole communicator). Each transport
  // connects with its slice of `transports` and may wait
  // `setupTimeoutSeconds` for a peer (0: forever); a link cuts transfers
  // into pieces after the plans' pipeline chunk (`plans`). `calls` (may be
  // null) are this rank's collective calls, for the transports' checks of
  // calls that disagree. `waiting`: the communicator's, where the waits on
  // these links are marked (null: one of their own). `gpuModule`: this
  // rank's GPU's device module (null for a CPU rank), with the GPU current.
  CrossDomainLinks(Oob& oob, const std::vector<RankPlacement>& placements,
                   const DomainMap& domains,
                   const TransportSettings& transports,
                   double setupTimeoutSeconds, const PlanSettings& plans,
                   std::shared_ptr<AbortSignal> abort,
                   std::shared_ptr<const PeerLiveness> liveness,
                   std::shared_ptr<const CallLog> calls = nullptr,
                   std::shared_ptr<WaitingCall> waiting = nullptr,
                   const DeviceModule* gpuModule = nullptr);
  ~CrossDomainLinks();

  Link& to(int peer) const;
  std::shared_ptr<PiecedLink> shared(int peer) const;
  // "1 shm, 2 tcp", for the log.
  const std::string& summary() const { return summary_; }
  // The transport of every pair of ranks of different domains.
  std::shared_ptr<const TransportChoice> choice() const { return choice_; }
  // Looks for what no transfer waits for (LinkSet::poll): from the
  // communicator's async-error query.
  void poll() const;
  // Payload bytes this rank moved across domains since startCounting().
  size_t bytesSent() const;
  size_t bytesReceived() const;
  // Counts from here on: what set-up moved (algo/link_probe.h) is not the
  // plans' traffic.
  void startCounting();
  // Where the engine that runs the plans marks its waits on these links,
  // for the call probe (which may outlive the links): the communicator's
  // WaitingCall, which its domain's waits mark too.
  const std::shared_ptr<WaitingCall>& waiting() const { return waiting_; }

 private:
  int rank_;
  std::shared_ptr<const TransportChoice> choice_;
  std::vector<std::unique_ptr<LinkSet>> linkSets_;
  std::map<int, std::shared_ptr<PiecedLink>> links_;
  std::string summary_;
  const std::shared_ptr<WaitingCall> waiting_;
  size_t sentBefore_ = 0;
  size_t receivedBefore_ = 0;
};

}  // namespace hetccl
