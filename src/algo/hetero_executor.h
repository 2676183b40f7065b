// Runs the operations of a communicator whose ranks belong to several
// domains: each op becomes a plan of steps inside this rank's domain (on
// the domain's vendor communicator) and steps across domains (over shm
// links to ranks on this host, tcp links to ranks elsewhere).
#pragma once

#include "util/peer_liveness.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "algo/domains.h"
#include "algo/plan_context.h"
#include "transport/transport.h"
#include "util/inflight_tracker.h"
#include "util/oob.h"
#include "util/settings.h"

namespace hetccl {

class HeteroExecutor : public Executor,
                       public std::enable_shared_from_this<HeteroExecutor> {
 public:
  // Collective over `oob` (the whole communicator). `placements` say
  // where every rank runs; `domainComm` is this rank's domain
  // communicator; `settings` the communicator's parameters.
  static std::shared_ptr<HeteroExecutor> create(
      Oob& oob, const std::vector<RankPlacement>& placements,
      const Settings& settings, std::shared_ptr<Executor> domainComm,
      std::shared_ptr<AbortSignal> abort,
      std::shared_ptr<const PeerLiveness> liveness);
  ~HeteroExecutor() override;

  void launch(const std::vector<Op>& ops, StreamHandle stream) override;
  bool drain(double timeoutSeconds) override;

  const DomainMap& domains() const { return domains_; }
  // Payload bytes this rank moved across domains so far.
  size_t bytesSent() const;
  size_t bytesReceived() const;

 private:
  HeteroExecutor(Oob& oob, const std::vector<RankPlacement>& placements,
                 const Settings& settings, std::shared_ptr<Executor> domainComm,
                 std::shared_ptr<AbortSignal> abort,
                 std::shared_ptr<const PeerLiveness> liveness);
  void connectLinks(Oob& oob, const std::vector<RankPlacement>& placements,
                    const Settings& settings,
                    std::shared_ptr<const PeerLiveness> liveness);
  void execute(const std::vector<Op>& ops);
  void runPlan(const Op& op);
  Link& linkTo(int peer) const;

  int rank_;
  int nranks_;
  DomainMap domains_;
  std::shared_ptr<Executor> domainComm_;
  std::shared_ptr<AbortSignal> abort_;
  std::vector<std::unique_ptr<LinkSet>> linkSets_;
  std::string linkSummary_;  // "1 shm, 2 tcp", for the log
  std::map<int, std::shared_ptr<Link>> links_;
  PlanContext context_;
  std::vector<char> scratch_;
  std::mutex planMutex_;  // one plan at a time
  InflightTracker inflight_;
};

}  // namespace hetccl
