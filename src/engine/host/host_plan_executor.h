// Runs the operations of a CPU rank in a communicator of several domains:
// each op becomes a plan of steps inside this rank's domain (on the host
// engine's domain communicator) and steps across domains (over shm links
// to ranks on this host, tcp links to ranks elsewhere), run on the
// caller's host stream. GPU ranks run the same plans on the GPU engine
// (engine/gpu/plan/gpu_plan_executor.h).
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "algo/cross_domain_links.h"
#include "algo/domains.h"
#include "algo/plan_context.h"
#include "algo/plan_settings.h"
#include "engine/engine_step.h"
#include "engine/host/host_plan_data.h"
#include "engine/host/host_timeline.h"
#include "util/inflight_tracker.h"

namespace hetccl {

class HostPlanExecutor : public Executor,
                         public StepTimedEngine,
                         public std::enable_shared_from_this<HostPlanExecutor> {
 public:
  // `domains` say who is in which domain; `links` reach every rank of the
  // others; `domainComm` is this rank's domain communicator. A wait for a
  // peer fails after `timeoutSeconds` (0: never).
  static std::shared_ptr<HostPlanExecutor> create(
      int rank, const DomainMap& domains,
      std::shared_ptr<CrossDomainLinks> links, const PlanSettings& plans,
      double timeoutSeconds, std::shared_ptr<Executor> domainComm,
      std::shared_ptr<AbortSignal> abort);
  ~HostPlanExecutor() override;

  void launch(const std::vector<Op>& ops, StreamHandle stream) override;
  bool drain(double timeoutSeconds) override;
  // What the links see while no transfer waits (a peer whose call
  // disagreed), as the abort signal's code.
  ncclResult_t asyncError() const override;

  // Each all-reduce run on the calling thread, as on a host stream's.
  double timeOneElementAllReduceUs(int rounds, double timeoutSeconds) override;
  std::optional<LibraryCost> timeDomainLibrary(int rounds) override;
  void retune(const PlanSettings& plans) override;

  // The plans' scratch in bytes (HostPlanData::scratchHeld), once the
  // launches are done.
  size_t scratchHeld() const { return data_.scratchHeld(); }

 private:
  HostPlanExecutor(int rank, const DomainMap& domains,
                   std::shared_ptr<CrossDomainLinks> links,
                   const PlanSettings& plans, double timeoutSeconds,
                   std::shared_ptr<Executor> domainComm,
                   std::shared_ptr<AbortSignal> abort);
  void execute(const std::vector<Op>& ops);

  DomainMap domains_;
  std::shared_ptr<CrossDomainLinks> links_;
  std::shared_ptr<Executor> domainComm_;
  std::shared_ptr<AbortSignal> abort_;
  // HETCCL_ENGINE_TIMELINE: what the plans spend their time on (else null),
  // and the domain communicator timed as its domain steps.
  std::unique_ptr<HostTimeline> timeline_;
  std::unique_ptr<TimedHostDomainSteps> timedDomainSteps_;
  HostPlanData data_;      // after domains_: its helpers count the domain
  DecisionLog decisions_;  // the plans' choices, once per kind and size
  PlanContext context_;
  std::mutex planMutex_;  // one plan at a time
  InflightTracker inflight_;
};

}  // namespace hetccl
