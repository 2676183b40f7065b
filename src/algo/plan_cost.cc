#include "algo/plan_cost.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "util/error.h"

namespace hetccl {
namespace {

// The bytes a ring moves per rank for a collective of `bytes` (the
// buffer of an all-reduce or broadcast, the whole output or input of an
// all-gather or reduce-scatter) over p ranks.
double busBytes(OpKind kind, double bytes, int p) {
  const double shared = static_cast<double>(p - 1) / p;
  switch (kind) {
    case OpKind::AllReduce:
      return 2 * shared * bytes;
    case OpKind::AllGather:
    case OpKind::ReduceScatter:
      return shared * bytes;
    default:
      return bytes;
  }
}

double microseconds(double bytes, double gbps) { return bytes / (gbps * 1e3); }

}  // namespace

LibraryCost defaultLibraryCost(RuntimeKind runtime) {
  // nccl-tests: 360-480 GB/s all-reduce bus bandwidth on 8 H100 SXM;
  // rccl-tests: 250-310 GB/s on 8 MI300X; the host collectives: one host's
  // shared memory, a few GB/s per pair of ranks.
  switch (runtime) {
    case RuntimeKind::Cuda:
      return {10, 360};
    case RuntimeKind::Hip:
      return {15, 250};
    default:
      return {5, 10};
  }
}

double defaultMemoryGbps(RuntimeKind runtime) {
  return runtime == RuntimeKind::Host ? 10 : 2000;
}

CostLayout costLayoutOf(const std::vector<int>& sizes,
                        const std::vector<RuntimeKind>& runtimes,
                        double hostMemoryGbps) {
  CostLayout layout;
  layout.domainSizes = sizes;
  layout.memoryGbps = 1e30;
  layout.stepUs = kHostEngineStepUs;
  layout.pipelineUs = kHostPipelineUs;
  layout.runtimes = runtimes;
  for (RuntimeKind runtime : runtimes) {
    layout.libraries.push_back(defaultLibraryCost(runtime));
    const bool measured = runtime == RuntimeKind::Host && hostMemoryGbps > 0;
    layout.memoryGbps =
        std::min(layout.memoryGbps,
                 measured ? hostMemoryGbps : defaultMemoryGbps(runtime));
    if (runtime != RuntimeKind::Host) {
      layout.stepUs = kGpuEngineStepUs;
      layout.pipelineUs = 0;
      layout.gpuEngine = true;
    }
  }
  return layout;
}

CostLayout costLayoutOf(const DomainMap& domains,
                        const std::vector<RankPlacement>& placements,
                        double hostMemoryGbps) {
  std::vector<int> sizes;
  std::vector<RuntimeKind> runtimes;
  for (int d = 0; d < domains.count(); ++d) {
    sizes.push_back(static_cast<int>(domains.members(d).size()));
    runtimes.push_back(static_cast<RuntimeKind>(
        placements[domains.members(d).front()].runtime));
  }
  return costLayoutOf(sizes, runtimes, hostMemoryGbps);
}

PlanCostModel::PlanCostModel(CostLayout layout, LinkCost link)
    : layout_(std::move(layout)), link_(link) {
  if (layout_.domainSizes.size() < 2 ||
      layout_.libraries.size() != layout_.domainSizes.size() ||
      layout_.runtimes.size() != layout_.domainSizes.size() ||
      layout_.memoryGbps <= 0 || link_.gbps <= 0 || link_.alphaUs < 0)
    fail(ncclInternalError, "plan cost model: incomplete layout or link");
}

int PlanCostModel::totalRanks() const {
  return std::accumulate(layout_.domainSizes.begin(), layout_.domainSizes.end(),
                         0);
}

int PlanCostModel::fanOut(int domain) const {
  const int p = layout_.domainSizes[domain];
  int ranks = 0;
  for (int e = 0; e < static_cast<int>(layout_.domainSizes.size()); ++e)
    if (e != domain) ranks += (layout_.domainSizes[e] + p - 1) / p;
  return ranks;
}

bool PlanCostModel::onePassAtRoot(int domain, double chunks) const {
  return layout_.domainSizes[domain] > 1 && chunks > 1 &&
         layout_.runtimes[domain] != RuntimeKind::Host;
}

double PlanCostModel::libraryUs(int domain, OpKind kind, double bytes) const {
  const int p = layout_.domainSizes[domain];
  if (bytes == 0) return 0;
  // A domain of one rank skips its steps but an all-reduce's (the one-shot
  // plans'), which copies the buffer into place.
  if (p == 1)
    return kind == OpKind::AllReduce ? microseconds(bytes, layout_.memoryGbps)
                                     : 0;
  const LibraryCost& library = layout_.libraries[domain];
  return library.alphaUs +
         microseconds(busBytes(kind, bytes, p), library.busGbps);
}

double PlanCostModel::crossUs(const Pass& pass) const {
  return pass.crossHops * (link_.alphaUs + layout_.stepUs +
                           (pass.transfers - 1) * link_.transferUs) +
         microseconds(pass.crossBytes, link_.gbps);
}

PlanCostModel::Pass PlanCostModel::oneShotPass(OpKind kind, int domain,
                                               double bytes) const {
  const int p = layout_.domainSizes[domain];
  const int n = totalRanks();
  const double others = static_cast<double>(layout_.domainSizes.size() - 1);
  const double block = bytes / n;
  Pass pass;
  switch (kind) {
    case OpKind::AllReduce:
      // Every rank takes each other domain's partial and combines them.
      pass.domainUs = libraryUs(domain, OpKind::AllReduce, bytes) +
                      microseconds(others * bytes, layout_.memoryGbps);
      pass.crossBytes = std::max(others, 1.0 * fanOut(domain)) * bytes;
      pass.transfers = std::max(static_cast<int>(others), fanOut(domain));
      break;
    case OpKind::ReduceScatter:
      pass.domainUs = libraryUs(domain, OpKind::AllReduce, bytes) +
                      microseconds(others * block, layout_.memoryGbps);
      pass.crossBytes = std::max(others, 1.0 * fanOut(domain)) * block;
      pass.transfers = std::max(static_cast<int>(others), fanOut(domain));
      break;
    case OpKind::AllGather:
      // Every block goes straight to every rank outside its domain.
      pass.domainUs = libraryUs(domain, OpKind::AllGather, p * block);
      pass.crossBytes = (n - p) * block;
      pass.transfers = n - p;
      pass.overlapped = true;
      break;
    case OpKind::Reduce:
      // To a root in `domain`, the costlier end: each domain reduces to
      // one rank, and the root takes every other domain's partial.
      pass.domainUs = libraryUs(domain, OpKind::Reduce, bytes) +
                      microseconds(others * bytes, layout_.memoryGbps);
      pass.crossBytes = others * bytes;
      pass.transfers = static_cast<int>(others);
      break;
    default:  // Broadcast, from a root in `domain`: the costlier end
      pass.domainUs = libraryUs(domain, OpKind::Broadcast, bytes);
      pass.crossBytes = (n - p) * bytes;
      pass.transfers = n - p;
      pass.overlapped = true;
      break;
  }
  return pass;
}

PlanCostModel::Pass PlanCostModel::pipelinedPass(OpKind kind, int domain,
                                                 double bytes,
                                                 double chunks) const {
  const int p = layout_.domainSizes[domain];
  const int n = totalRanks();
  const double d = static_cast<double>(layout_.domainSizes.size());
  const double block = bytes / n;
  Pass pass;
  switch (kind) {
    case OpKind::AllReduce:
      // Partials to each piece's reducer and its result back: two hops,
      // each domain reducing 1/D of the chunk over its ranks.
      pass.domainUs =
          libraryUs(domain, OpKind::ReduceScatter, bytes) +
          libraryUs(domain, OpKind::AllGather, bytes) +
          microseconds((d - 1) * bytes / (d * p), layout_.memoryGbps);
      pass.crossBytes = 2 * (d - 1) * bytes / (d * p);
      pass.crossHops = 2;
      pass.transfers = std::max(static_cast<int>(d) - 1, fanOut(domain));
      break;
    case OpKind::ReduceScatter:
      pass.domainUs = libraryUs(domain, OpKind::ReduceScatter, bytes) +
                      microseconds((d - 1) * block, layout_.memoryGbps);
      pass.crossBytes = std::max((n - p) * block / p, (d - 1) * block);
      pass.transfers = std::max(static_cast<int>(d) - 1, fanOut(domain));
      break;
    case OpKind::AllGather:
      // Each block crosses once per other domain; the domain spreads what
      // its ranks took in.
      pass.domainUs = libraryUs(domain, OpKind::AllGather, bytes);
      pass.crossBytes = std::max((d - 1) * block, (n - p) * block / p);
      pass.transfers = std::max(static_cast<int>(d) - 1, fanOut(domain));
      break;
    case OpKind::Reduce:
      // To a root in `domain`: its GPU ranks take their ranges' partials
      // from the other domains and add them to copies of their inputs,
      // which the domain reduces to the root; CPU ranks, or a buffer of one
      // chunk, reduce-scatter, combine and hand each range to the root
      // instead (reduce.cc).
      pass.domainUs = (onePassAtRoot(domain, chunks)
                           ? libraryUs(domain, OpKind::Reduce, bytes) +
                                 microseconds(2 * bytes, layout_.memoryGbps)
                           : libraryUs(domain, OpKind::ReduceScatter, bytes) +
                                 libraryUs(domain, OpKind::AllGather, bytes)) +
                      microseconds((d - 1) * bytes / p, layout_.memoryGbps);
      pass.crossBytes = (d - 1) * bytes / p;
      pass.transfers = std::max(static_cast<int>(d) - 1, fanOut(domain));
      break;
    default:  // Broadcast: a root in `domain` sends a share to every other
      pass.domainUs = libraryUs(domain, OpKind::Broadcast, bytes);
      pass.crossBytes = (d - 1) * bytes / p;
      pass.transfers = static_cast<int>(d) - 1;
      break;
  }
  return pass;
}

double PlanCostModel::oneShotUs(OpKind kind, size_t bytes) const {
  double slowest = 0;
  for (int domain = 0; domain < static_cast<int>(layout_.domainSizes.size());
       ++domain) {
    const Pass pass = oneShotPass(kind, domain, static_cast<double>(bytes));
    const double cross = crossUs(pass);
    slowest = std::max(slowest, pass.overlapped ? std::max(pass.domainUs, cross)
                                                : pass.domainUs + cross);
  }
  return slowest;
}

double PlanCostModel::pipelinedUs(OpKind kind, size_t bytes,
                                  size_t chunkBytes) const {
  const size_t chunk = std::max<size_t>(1, std::min(chunkBytes, bytes));
  const double chunks = std::ceil(static_cast<double>(bytes) / chunk);
  double slowest = 0;
  for (int domain = 0; domain < static_cast<int>(layout_.domainSizes.size());
       ++domain) {
    const Pass pass =
        pipelinedPass(kind, domain, static_cast<double>(chunk), chunks);
    const double cross = crossUs(pass);
    slowest =
        std::max(slowest, pass.domainUs + cross +
                              (chunks - 1) * std::max(pass.domainUs, cross));
  }
  return layout_.pipelineUs + slowest;
}

}  // namespace hetccl
