// The cost model of the plans across domains (issue #32): how long a
// collective's one-shot plan and its pipelined plan take on a
// communicator's layout, from the link between domains (latency and rate,
// measured at init: algo/link_probe.h) and each domain's library. It is
// the alpha-beta model hetccl-sim prices its links and libraries with,
// written out per plan so that a communicator can ask it at init which
// plan and chunk each size should take (algo/plan_tuning.h).
//
// What a plan costs, per domain (the slowest one counts):
//   - a one-shot plan: its domain steps, then (beside them, for all-gather
//     and broadcast) one hop across (the link's latency and the engine's
//     step) and the bytes the busiest rank sends or receives across;
//   - a pipelined plan of n chunks: its bookkeeping, the first chunk's
//     domain steps (and reductions) and hops across one after the other,
//     then for each further chunk the longer of the two, since one chunk's
//     transfers overlap the next chunk's domain steps.
#pragma once

#include <cstddef>
#include <vector>

#include "algo/domains.h"
#include "op/op.h"
#include "runtime/runtime.h"

namespace hetccl {

// A link between domains: what one transfer takes is alphaUs + bytes /
// gbps; each further transfer a rank sends at once (to other peers, or in
// pieces) adds transferUs, the sender's own cost per transfer.
struct LinkCost {
  double alphaUs = 0;
  double gbps = 0;
  double transferUs = 0;
};

// A domain's library: a collective takes alphaUs + its bus bytes (nccl-tests'
// bus factors) / busGbps.
struct LibraryCost {
  double alphaUs = 0;
  double busGbps = 0;
};

struct CostLayout {
  std::vector<int> domainSizes;
  std::vector<LibraryCost> libraries;  // one per domain
  std::vector<RuntimeKind> runtimes;   // one per domain
  // The slowest rank's rate for reductions and copies.
  double memoryGbps = 0;
  // The engine's fixed cost per hop across domains (the GPU engine's
  // hand-overs between its streams and the proxy, a CPU rank's plan
  // thread), on top of the link's latency.
  double stepUs = 0;
  // What a pipelined plan costs once beyond a one-shot plan's
  // bookkeeping (its chunks, scratch halves and waits).
  double pipelineUs = 0;
  // Some rank runs the GPU engine (the others the host engine).
  bool gpuEngine = false;
};

// What the model assumes of each domain's library (its runtime's: the
// host collectives, NCCL or RCCL) and of a rank's reductions, from public
// figures (tools/sim/README.md); hetccl-sim starts from the same.
LibraryCost defaultLibraryCost(RuntimeKind runtime);
double defaultMemoryGbps(RuntimeKind runtime);
// The engine's cost per hop across domains: the GPU engine's hand-overs
// between its streams and the proxy (about 150 us: a chunk between pretend
// hosts on one H200, bench/results/gpu-engine-chunks-and-time-split-
// 2026-11-30.md; the pipelined all-reduce's second hop against the
// one-shot's, bench/results/cost-model-2026-12-04.md), a CPU rank's plan
// thread. Where the link is measured, the engines time their own at init
// instead (engine/engine_step.h); these stand for declared links and the
// simulator.
constexpr double kGpuEngineStepUs = 150;
constexpr double kHostEngineStepUs = 20;
// A CPU rank's pipelined plan beyond its one-shot plan: 5-12 us at 1-16
// KB on 2 domains of 2 ranks (bench/results/cost-model-2026-12-04.md); on
// GPU ranks the staged engine's pipelined all-gather measured faster than
// its one-shot one, so none.
constexpr double kHostPipelineUs = 10;

// A layout with those defaults: domains of `sizes` ranks of `runtimes`,
// each domain's library, the slowest rank's memory, the slowest engine's
// step. CPU ranks reduce at `hostMemoryGbps` where it is above 0
// (measured).
CostLayout costLayoutOf(const std::vector<int>& sizes,
                        const std::vector<RuntimeKind>& runtimes,
                        double hostMemoryGbps = 0);
// A communicator's.
CostLayout costLayoutOf(const DomainMap& domains,
                        const std::vector<RankPlacement>& placements,
                        double hostMemoryGbps = 0);

class PlanCostModel {
 public:
  PlanCostModel(CostLayout layout, LinkCost link);

  // `bytes` is what HETCCL_ONE_SHOT_MAX is compared with: the buffer of an
  // all-reduce, broadcast or reduce, the output of an all-gather, the
  // input of a reduce-scatter. Only those five kinds have both plans.
  double oneShotUs(OpKind kind, size_t bytes) const;
  double pipelinedUs(OpKind kind, size_t bytes, size_t chunkBytes) const;

  const CostLayout& layout() const { return layout_; }
  const LinkCost& link() const { return link_; }

 private:
  // One domain's view of one pass over `bytes` (the whole op or a chunk).
  struct Pass {
    double domainUs = 0;    // domain steps and reductions
    double crossBytes = 0;  // the busiest rank's bytes across, one way
    int crossHops = 1;      // transfers that follow each other
    int transfers = 1;      // the busiest rank's transfers per hop
    // The domain steps run beside the transfers instead of before them.
    bool overlapped = false;
  };
  Pass oneShotPass(OpKind kind, int domain, double bytes) const;
  // One chunk's pass, of `bytes`, out of `chunks`.
  Pass pipelinedPass(OpKind kind, int domain, double bytes,
                     double chunks) const;
  double libraryUs(int domain, OpKind kind, double bytes) const;
  // Whether a reduce to a root in `domain` reduces there in one pass.
  bool onePassAtRoot(int domain, double chunks) const;
  double crossUs(const Pass& pass) const;
  int totalRanks() const;
  // Ranks of other domains that each rank of `domain` sends a whole
  // buffer to, where each takes it from one member (localRank % size).
  int fanOut(int domain) const;

  CostLayout layout_;
  LinkCost link_;
};

}  // namespace hetccl
