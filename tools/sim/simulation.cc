#include "simulation.h"

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "algo/domains.h"
#include "algo/pipeline.h"
#include "algo/plan_context.h"
#include "domain_model.h"
#include "ideal.h"
#include "network.h"
#include "runtime/runtime.h"
#include "scheduler.h"
#include "sim_data.h"
#include "sim_link.h"
#include "util/dtype.h"

namespace hetccl::sim {
namespace {

struct Names {
  SimCollective collective;
  const char* name;
};
constexpr Names kNames[] = {
    {SimCollective::AllReduce, "allreduce"},
    {SimCollective::AllGather, "allgather"},
    {SimCollective::ReduceScatter, "reducescatter"},
    {SimCollective::Broadcast, "broadcast"},
    {SimCollective::Reduce, "reduce"},
    {SimCollective::AlltoAll, "alltoall"},
    {SimCollective::SendRecv, "sendrecv"},
};

Op baseOp(OpKind kind, size_t count, ncclDataType_t dtype) {
  Op op;
  op.kind = kind;
  op.sendbuff = fakeAddress(0);
  op.recvbuff = fakeAddress(1);
  op.count = count;
  op.dtype = dtype;
  op.sequence = 1;
  return op;
}

// Rank `rank`'s ops for `spec`.
std::vector<Op> opsOf(const OpSpec& spec, int rank, int nranks) {
  const size_t elements = spec.bytes / dtypeSize(spec.dtype);
  const size_t perRank = elements / nranks;
  switch (spec.collective) {
    case SimCollective::AllReduce:
      return {baseOp(OpKind::AllReduce, elements, spec.dtype)};
    case SimCollective::AllGather:
      return {baseOp(OpKind::AllGather, perRank, spec.dtype)};
    case SimCollective::ReduceScatter:
      return {baseOp(OpKind::ReduceScatter, perRank, spec.dtype)};
    case SimCollective::AlltoAll:
      return {baseOp(OpKind::AlltoAll, perRank, spec.dtype)};
    case SimCollective::Broadcast:
    case SimCollective::Reduce: {
      Op op =
          baseOp(spec.collective == SimCollective::Broadcast ? OpKind::Broadcast
                                                             : OpKind::Reduce,
                 elements, spec.dtype);
      op.root = spec.root;
      return {op};
    }
    case SimCollective::SendRecv: {
      Op send = baseOp(OpKind::Send, elements, spec.dtype);
      send.root = (rank + 1) % nranks;
      Op recv = baseOp(OpKind::Recv, elements, spec.dtype);
      recv.root = (rank + nranks - 1) % nranks;
      return {send, recv};
    }
  }
  return {};
}

DomainMap domainMapOf(const std::vector<RankPlace>& places) {
  std::vector<RankPlacement> placements;
  for (const RankPlace& place : places)
    placements.push_back({static_cast<int>(RuntimeKind::Cuda), place.domain,
                          static_cast<uint64_t>(place.host)});
  return DomainMap(placements);
}

// Everything one run of one operation needs, rank by rank.
class Run {
 public:
  Run(const ClusterSpec& cluster, const PlanKnobs& knobs)
      : cluster_(cluster),
        knobs_(knobs),
        places_(placeRanks(cluster)),
        domains_(domainMapOf(places_)),
        network_(cluster, places_, crossDomainPieceBytes(knobs.chunkBytes)),
        wires_(scheduler_, network_, cluster.nranks()),
        links_(places_.size()),
        finished_(places_.size(), 0) {
    for (int d = 0; d < domains_.count(); ++d)
      libraries_.push_back(std::make_unique<DomainLibrary>(
          scheduler_, wires_, cluster, d, domains_.members(d)));
    for (size_t r = 0; r < places_.size(); ++r) {
      const DomainSpec& domain = cluster.domains[places_[r].domain];
      gpus_.push_back(isGpuRank(static_cast<int>(r)) ? makeGpu() : nullptr);
      SimStream* stream = gpus_.back() ? gpus_.back()->stream.get() : nullptr;
      executors_.push_back(std::make_unique<SimExecutor>(
          *libraries_[places_[r].domain], static_cast<int>(r), stream));
      data_.push_back(std::make_unique<SimData>(
          scheduler_, domain.library.memoryGBps * 1e9, stream));
    }
  }

  SimResult run(const OpSpec& spec) {
    const int nranks = static_cast<int>(places_.size());
    for (int r = 0; r < nranks; ++r)
      scheduler_.spawn([this, r, nranks, spec] {
        const std::vector<Op> ops = opsOf(spec, r, nranks);
        Gpu* gpu = gpus_[r].get();
        if (gpu) gpu->unchangedInputs.start(ops, r, nranks);
        runPlans(contextOf(r), ops);
        finished_[r] = scheduler_.now();
        if (!gpu) return;
        gpu->stream->close();
        gpu->up->close();
      });
    scheduler_.run();
    for (int r = 0; r < nranks; ++r)
      if (const Gpu* gpu = gpus_[r].get())
        finished_[r] = std::max(
            {finished_[r], gpu->stream->finishedAt(), gpu->up->finishedAt()});
    return resultOf(spec);
  }

 private:
  // A GPU rank's streams and what its links share (sim_link.h).
  struct Gpu {
    std::unique_ptr<SimStream> stream, up;
    UnchangedInputs unchangedInputs;
    GpuSide side;
  };

  std::unique_ptr<Gpu> makeGpu() {
    auto gpu = std::make_unique<Gpu>();
    gpu->stream = std::make_unique<SimStream>(scheduler_);
    gpu->up = std::make_unique<SimStream>(scheduler_);
    gpu->side = {gpu->stream.get(), gpu->up.get(), &gpu->unchangedInputs,
                 crossDomainPieceBytes(knobs_.chunkBytes)};
    return gpu;
  }

  PlanContext contextOf(int rank) {
    PlanContext ctx;
    ctx.rank = rank;
    ctx.nranks = static_cast<int>(places_.size());
    ctx.domains = &domains_;
    ctx.domainComm = executors_[rank].get();
    ctx.linkTo = [this, rank](int peer) -> Link& {
      std::unique_ptr<SimLink>& link = links_[rank][peer];
      if (!link)
        link = std::make_unique<SimLink>(
            scheduler_, wires_, rank, peer,
            gpus_[rank] ? &gpus_[rank]->side : nullptr,
            places_[rank].host != places_[peer].host);
      return *link;
    };
    ctx.abort = &abort_;
    ctx.chunkBytes = knobs_.chunkBytes;
    ctx.oneShotMaxBytes = knobs_.oneShotMaxBytes;
    ctx.tuning = knobs_.tuning;
    ctx.data = data_[rank].get();
    ctx.dataOnGpu = isGpuRank(rank);
    ctx.domainReadsBlocksApart =
        cluster_.domains[places_[rank].domain].library.name == "host";
    return ctx;
  }

  // A GPU rank's plan enqueues its work on its stream (sim_stream.h).
  bool isGpuRank(int rank) const {
    return cluster_.domains[places_[rank].domain].library.name != "host";
  }

  size_t peersTouched(int rank) const {
    size_t peers = 0;
    for (const auto& entry : links_[rank])
      if (entry.second->bytesSent() + entry.second->bytesReceived() > 0)
        ++peers;
    return peers;
  }

  size_t pinnedBytes(int rank) const {
    size_t total = 0;
    for (const auto& entry : links_[rank]) total += entry.second->pinnedBytes();
    return total;
  }

  SimResult resultOf(const OpSpec& spec) const {
    SimResult result;
    const int nranks = static_cast<int>(places_.size());
    result.seconds = *std::max_element(finished_.begin(), finished_.end());
    if (result.seconds > 0) {
      result.algGBps = static_cast<double>(spec.bytes) / result.seconds / 1e9;
      result.busGBps = result.algGBps * busFactor(spec.collective, nranks);
    }
    size_t total = 0;
    for (int r = 0; r < nranks; ++r) {
      result.messagesMax = std::max(result.messagesMax, wires_.messagesSent(r));
      total += wires_.messagesSent(r);
      result.scratchMax = std::max(result.scratchMax, data_[r]->scratchBytes());
      result.pinnedMax = std::max(result.pinnedMax, pinnedBytes(r));
      result.peersMax = std::max(result.peersMax, peersTouched(r));
      result.memorySeconds =
          std::max(result.memorySeconds, data_[r]->busySeconds());
    }
    result.messagesMean = static_cast<double>(total) / nranks;
    for (const auto& library : libraries_)
      result.domainSeconds =
          std::max(result.domainSeconds, library->busySeconds());
    const Resource* busiest = nullptr;
    for (const Resource& resource : network_.resources())
      if (!busiest || resource.busySeconds > busiest->busySeconds)
        busiest = &resource;
    if (busiest && busiest->busySeconds > 0) {
      result.busiest = busiest->name;
      result.busiestBytes = busiest->bytes;
      if (result.seconds > 0)
        result.busiestUtilization = busiest->busySeconds / result.seconds;
    }
    return result;
  }

  const ClusterSpec& cluster_;
  const PlanKnobs knobs_;
  const std::vector<RankPlace> places_;
  const DomainMap domains_;
  Scheduler scheduler_;
  Network network_;
  Wires wires_;
  AbortSignal abort_;  // never raised: a simulation does not fail a rank
  std::vector<std::unique_ptr<DomainLibrary>> libraries_;
  std::vector<std::unique_ptr<Gpu>> gpus_;  // null: a CPU rank
  std::vector<std::unique_ptr<SimExecutor>> executors_;
  std::vector<std::unique_ptr<SimData>> data_;
  std::vector<std::map<int, std::unique_ptr<SimLink>>> links_;
  std::vector<double> finished_;
};

}  // namespace

const char* collectiveName(SimCollective collective) {
  for (const Names& n : kNames)
    if (n.collective == collective) return n.name;
  return "?";
}

bool parseCollective(const std::string& name, SimCollective* collective) {
  for (const Names& n : kNames)
    if (name == n.name) {
      *collective = n.collective;
      return true;
    }
  return false;
}

double busFactor(SimCollective collective, int ranks) {
  const double n = ranks;
  switch (collective) {
    case SimCollective::AllReduce:
      return 2 * (n - 1) / n;
    case SimCollective::AllGather:
    case SimCollective::ReduceScatter:
    case SimCollective::AlltoAll:
      return (n - 1) / n;
    case SimCollective::Broadcast:
    case SimCollective::Reduce:
    case SimCollective::SendRecv:
      return 1;
  }
  return 1;
}

CostLayout modelLayoutOf(const ClusterSpec& cluster) {
  std::vector<int> sizes;
  std::vector<RuntimeKind> runtimes;
  for (const DomainSpec& domain : cluster.domains) {
    sizes.push_back(domain.hosts * domain.ranksPerHost);
    runtimes.push_back(domain.library.name == "host" ? RuntimeKind::Host
                                                     : RuntimeKind::Cuda);
  }
  CostLayout layout = costLayoutOf(sizes, runtimes);
  layout.memoryGbps = 1e30;
  for (size_t d = 0; d < cluster.domains.size(); ++d) {
    const LibraryModel& library = cluster.domains[d].library;
    layout.libraries[d] = {library.alphaUs, library.busGBps};
    layout.memoryGbps = std::min(layout.memoryGbps, library.memoryGBps);
  }
  return layout;
}

LinkCost modelLinkOf(const ClusterSpec& cluster) {
  // A further transfer costs its sender the proxy's hand-over per piece.
  if (cluster.loopbackGBps > 0)
    return {cluster.nics.latencyUs, cluster.loopbackGBps / 2, cluster.pieceUs};
  double share = 1;
  for (const DomainSpec& domain : cluster.domains)
    share = std::min(
        share, static_cast<double>(cluster.nics.perHost) / domain.ranksPerHost);
  return {cluster.nics.latencyUs, cluster.nics.gbps / 8 * share,
          cluster.pieceUs};
}

SimResult simulate(const ClusterSpec& cluster, const OpSpec& op,
                   const PlanKnobs& knobs) {
  Run run(cluster, knobs);
  SimResult result = run.run(op);
  result.idealSeconds = idealSeconds(cluster, op);
  return result;
}

}  // namespace hetccl::sim
