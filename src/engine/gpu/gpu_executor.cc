#include "engine/gpu/gpu_executor.h"

#include <vector>

#include "engine/engine_step.h"
#include "engine/gpu/stream_driven_executor.h"
#include "runtime/device/device_module.h"
#include "transport/transport_registry.h"
#include "util/log.h"

namespace hetccl {
namespace {

// A transport forced between ranks of one host that does not share memory
// (HETCCL_TRANSPORT=tcp) carries every byte instead. Every input is known
// on every rank, so the answer is the same everywhere.
bool outboxesFit(const GpuExecutorSetup& setup) {
  const DomainMap& domains = setup.plans.domains;
  const bool linksShareMemory =
      TransportSelection::parse(setup.transport).onOneHost().sharesHostMemory();
  return linksShareMemory && setup.everyRankIsALocalGpu &&
         domains.count() == domains.nranks() &&
         domains.nranks() <= HETCCL_DEVICE_MAX_SOURCES;
}

// HETCCL_GPU_DIRECT=0 is for comparing the paths; left set by mistake it
// slows every collective without a sign, so it is said once per
// communicator.
bool takesOutboxes(const GpuExecutorSetup& setup) {
  if (!outboxesFit(setup)) return false;
  if (setup.plans.engine.direct) return true;
  LOG_WARN(kLogInit,
           "rank %d: HETCCL_GPU_DIRECT=0: every collective is staged "
           "through host memory and a proxy thread instead of the "
           "stream-driven path these GPU ranks could take, which is "
           "faster; unset HETCCL_GPU_DIRECT",
           setup.plans.rank);
  return false;
}

// Every other rank is a GPU of this host in a domain of its own.
std::vector<std::string> outboxPaths(const GpuPlanExecutorSetup& plans) {
  std::vector<std::string> lines;
  for (int peer = 0; peer < plans.domains.nranks(); ++peer)
    if (peer != plans.rank)
      lines.push_back(format(
          "domain %d: through pinned host memory on this host, written and "
          "read by the GPUs' own streams (stream-driven, no proxy)",
          plans.domains.domainOf(peer)));
  return lines;
}

}  // namespace

GpuExecutor createGpuExecutor(GpuExecutorSetup setup) {
  GpuPlanExecutorSetup& plans = setup.plans;
  if (!takesOutboxes(setup)) {
    const PlanSettings& settings = plans.plans;
    auto executor = std::make_shared<GpuPlanExecutor>(std::move(plans));
    if (timesItsStep(settings))
      tuneToMeasuredStep(*executor, settings, plans.domains, setup.oob,
                         setup.setUpTimeoutSeconds);
    return {executor, false, executor->gpuBufferPaths()};
  }
  std::vector<std::string> paths = outboxPaths(plans);
  auto collectives = std::make_unique<DeviceShmCollectives>(
      setup.oob, plans.module, plans.engine.chunkBytes,
      plans.engine.lowLatencyMaxBytes);
  plans.onFailure = StreamDrivenExecutor::outboxesFailure(*collectives);
  StreamDrivenSetup streamDriven{plans.module,
                                 plans.device,
                                 plans.rank,
                                 plans.domains.nranks(),
                                 plans.timeoutSeconds,
                                 plans.abort,
                                 std::move(collectives),
                                 std::move(setup.liveness),
                                 std::move(setup.rankNames),
                                 setup.stallWarnSeconds};
  return {std::make_shared<StreamDrivenExecutor>(
              std::move(streamDriven),
              std::make_unique<GpuPlanExecutor>(std::move(plans))),
          true, std::move(paths)};
}

}  // namespace hetccl
