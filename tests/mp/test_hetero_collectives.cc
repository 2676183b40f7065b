// Collectives on heterogeneous communicators beyond the two-domain layouts
// of test_collectives.cc: three domains, uneven and interleaved domains,
// the tcp transport between domains, and buffers of several pipeline chunks
// (HETCCL_CHUNK=64K). Every collective runs every data type (and every
// reduction op), counts 0, 1, odd primes and 1009, in place and out of
// place, roots in every domain; each rank checks every output byte, and
// outputs that must be identical everywhere are compared bitwise across
// ranks. Layouts with more ranks run a thinner slice of the matrix so that
// the file stays quick on two cores (and under ASan).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "harness/case_batches.h"
#include "harness/check.h"
#include "harness/collective_case.h"
#include "harness/data.h"
#include "harness/domains.h"
#include "harness/nccl_handles.h"
#include "harness/run_ranks.h"
#include "hetccl.h"
#include "kit/dtype.h"

namespace hetccl::mp {
namespace {

// Cases issued on a host stream (or on the NULL stream) in a row.
constexpr size_t kStreamBatch = 4;
// The pipeline chunk the multi-chunk layouts force, and the bytes of their
// large case: several full chunks and a partial one.
constexpr const char* kSmallChunk = "65536";
constexpr size_t kLargeBytes = 6 * 65536 + 4 * 1009;
// Odd primes; none divides the others or any domain size used here.
const size_t kPrimes[] = {3, 13, 31, 127, 257, 509};
// A count that nothing divides evenly (prime, and above every rank count).
constexpr size_t kAwkwardCount = 1009;

// How much of the type x op x count matrix a layout runs.
enum class Density {
  kFull,   // every type x op at two counts (1 and an odd prime)
  kMedium  // every type x op at one count
};

// One communicator setup: how many ranks and how they fall into domains.
struct Layout {
  std::string name;
  int nranks;
  std::string domainsSpec;  // the HETCCL_DOMAINS value
  std::vector<int> labels;  // the label that value gives each rank
  std::string transport;    // HETCCL_TRANSPORT; empty: auto (shm here)
  bool smallChunks;         // HETCCL_CHUNK=64K
  Density density;
  bool emulatedGpus = false;  // GPU ranks on the host: the GPU engine runs
  // Only these ranks emulate GPUs: CPU and GPU ranks in one communicator,
  // their domains formed by runtime.
  std::vector<int> gpuRanks = {};
  std::map<std::string, std::string> env = {};  // further variables
};

// Domains are numbered in the order of their lowest rank.
std::vector<int> expectedDomainIndices(const std::vector<int>& labels) {
  std::map<int, int> indexOfLabel;
  std::vector<int> indices;
  for (int label : labels) {
    auto inserted =
        indexOfLabel.emplace(label, static_cast<int>(indexOfLabel.size()));
    indices.push_back(inserted.first->second);
  }
  return indices;
}

// Builds the cases every rank runs, in the same order.
class HeteroCaseList {
 public:
  HeteroCaseList(Collective collective, const Layout& layout)
      : collective_(collective),
        nranks_(layout.nranks),
        density_(layout.density),
        seed_(mixBits(0x4e7e, static_cast<uint64_t>(collective),
                      static_cast<uint64_t>(layout.nranks))) {}

  std::vector<CollectiveCase> build() {
    if (isReducing(collective_)) {
      addReductionMatrix();
    } else {
      addMovementMatrix();
    }
    addLarge();
    return cases_;
  }

 private:
  size_t nextPrime() {
    return kPrimes[primeCursor_++ % (sizeof(kPrimes) / sizeof(kPrimes[0]))];
  }

  void add(ncclDataType_t type, TestOp op, size_t count, bool inPlace) {
    CollectiveCase c;
    c.collective = collective_;
    c.type = type;
    c.op = op;
    c.count = count;
    size_t index = cases_.size();
    c.inPlace = supportsInPlace(collective_) && inPlace;
    // Consecutive roots fall into different domains in every layout here.
    c.root = static_cast<int>(index % nranks_);
    c.onStream = (index / kStreamBatch) % 2 == 1;
    c.seed = mixBits(seed_, index, 0x5eed);
    cases_.push_back(c);
  }

  void addReductionMatrix() {
    const std::vector<TestOp>& ops = allTestOps();
    size_t pair = 0;
    for (const kit::DataType& dataType : kit::allDataTypes()) {
      const ncclDataType_t type = dataType.nccl;
      for (TestOp op : ops) {
        bool inPlace = pair++ % 2 == 0;
        if (density_ == Density::kFull) {
          add(type, op, 1, inPlace);
          add(type, op, nextPrime(), !inPlace);
        } else {
          add(type, op, pair % 3 == 0 ? 1 : nextPrime(), inPlace);
        }
      }
    }
    addEdgeCounts();
  }

  void addMovementMatrix() {
    const std::vector<kit::DataType>& types = kit::allDataTypes();
    for (size_t t = 0; t < types.size(); ++t) {
      add(types[t].nccl, TestOp::kSum, 1, t % 2 == 0);
      add(types[t].nccl, TestOp::kSum, nextPrime(), t % 2 == 1);
      if (density_ == Density::kFull) {
        add(types[t].nccl, TestOp::kSum, nextPrime(), t % 2 == 0);
      }
    }
    addEdgeCounts();
  }

  // Zero elements, and the awkward count, in place and out of place.
  void addEdgeCounts() {
    const std::vector<kit::DataType>& types = kit::allDataTypes();
    const std::vector<TestOp>& ops = allTestOps();
    for (size_t t = 0; t < types.size(); ++t) {
      add(types[t].nccl, TestOp::kSum, 0, t % 2 == 0);
      add(types[t].nccl, ops[t % ops.size()], kAwkwardCount, t % 2 == 1);
    }
  }

  // Buffers of several pipeline chunks (with HETCCL_CHUNK=64K).
  void addLarge() {
    bool perRank = isSplitAcrossRanks(collective_);
    auto countFor = [&](size_t elementBytes) {
      size_t total = kLargeBytes / elementBytes;
      return perRank ? total / nranks_ + 7 : total + 7;
    };
    if (isReducing(collective_)) {
      add(ncclFloat32, TestOp::kSum, countFor(4), false);
      add(ncclBfloat16, TestOp::kMax, countFor(2), true);
      add(ncclFloat16, TestOp::kPreMulSumDevice, countFor(2), false);
      add(ncclInt64, TestOp::kAvg, countFor(8), true);
      return;
    }
    add(ncclInt8, TestOp::kSum, countFor(1), false);
    add(ncclFloat64, TestOp::kSum, countFor(8), true);
  }

  Collective collective_;
  int nranks_;
  Density density_;
  uint64_t seed_;
  size_t primeCursor_ = 0;
  std::vector<CollectiveCase> cases_;
};

// The communicator must see the layout's domains, with this rank in the
// domain its label implies.
void checkDomains(ncclComm_t comm, const Layout& layout, int rank) {
  std::vector<int> indices = expectedDomainIndices(layout.labels);
  int expectedCount = domainsByLabel(layout.labels).count();
  checkDomainCount(comm, expectedCount);
  int ndomains = 0;
  int domain = -1;
  MP_CHECK_NCCL(hetcclCommDomains(comm, &ndomains, &domain));
  MP_CHECK(domain == indices[rank])
      << "rank " << rank << " is in domain " << domain << ", expected "
      << indices[rank] << " for HETCCL_DOMAINS=" << layout.domainsSpec;
}

void runCases(RankContext& ctx, const Layout& layout,
              const std::vector<CollectiveCase>& cases) {
  Comm comm(ctx.initComm());
  checkDomains(comm.get(), layout, ctx.rank());
  runAndCheckCases(ctx, comm.get(), cases, kStreamBatch);
  // Every rank has peers in other domains and roots rotate through all
  // domains, so every rank must have moved payload across domains (not
  // necessarily both ways: a broadcast into a one-rank domain is sent by
  // one rank of the root's domain only).
  size_t sent = 0;
  size_t received = 0;
  MP_CHECK_NCCL(hetcclCommCrossDomainBytes(comm.get(), &sent, &received));
  MP_CHECK(sent + received > 0)
      << "this rank moved " << sent << " bytes out of and " << received
      << " bytes into its domain over " << cases.size() << " collectives";
  comm.destroy();
}

bool needsMissingUcx(const Layout& layout) {
  return layout.transport == "ucx" && !ucxModuleBuilt();
}

RunOptions optionsFor(const Layout& layout) {
  RunOptions options;
  options.timeoutSeconds = 240;
  options.env["HETCCL_DOMAINS"] = layout.domainsSpec;
  if (!layout.transport.empty()) {
    options.env["HETCCL_TRANSPORT"] = layout.transport;
  }
  // Small chunks are about the pipelined plans: small all-reduces take
  // them too, instead of the one-shot plan (test_one_shot.cc).
  if (layout.smallChunks) {
    options.env["HETCCL_CHUNK"] = kSmallChunk;
    options.env["HETCCL_ONE_SHOT_MAX"] = "0";
  }
  for (const auto& [name, value] : layout.env) options.env[name] = value;
  if (layout.emulatedGpus) options.env["HETCCL_EMULATED_GPU"] = "1";
  options.rankEnv = [gpuRanks = layout.gpuRanks](int rank) {
    std::map<std::string, std::string> env;
    if (std::find(gpuRanks.begin(), gpuRanks.end(), rank) != gpuRanks.end())
      env["HETCCL_EMULATED_GPU"] = "1";
    return env;
  };
  return options;
}

struct HeteroParam {
  Layout layout;
  Collective collective;

  std::string name() const {
    return std::string(collectiveName(collective)) + "_" + layout.name;
  }
};

void PrintTo(const HeteroParam& param, std::ostream* out) {
  *out << param.name();
}

class HeteroCollectivesTest : public ::testing::TestWithParam<HeteroParam> {};

TEST_P(HeteroCollectivesTest, TypesOpsCountsRootsAcrossDomains) {
  const HeteroParam& param = GetParam();
  const Layout& layout = param.layout;
  if (needsMissingUcx(layout)) GTEST_SKIP() << "this build has no UCX module";
  std::vector<CollectiveCase> cases =
      HeteroCaseList(param.collective, layout).build();
  runRanks(
      layout.nranks, [&](RankContext& ctx) { runCases(ctx, layout, cases); },
      optionsFor(layout));
}

std::vector<Layout> allLayouts() {
  return {
      // Two domains, 1 + 2 and 1 + 3, and 2 + 2.
      {"3ranks_011", 3, "0,1,1", {0, 1, 1}, "", true, Density::kFull},
      {"4ranks_0111", 4, "0,1,1,1", {0, 1, 1, 1}, "", true, Density::kFull},
      {"4ranks_0011", 4, "0,0,1,1", {0, 0, 1, 1}, "", true, Density::kFull},
      // Over tcp, whose receives combine as they arrive between 2
      // domains.
      {"3ranks_011_tcp", 3, "0,1,1", {0, 1, 1}, "tcp", true, Density::kFull},
      // Three domains of 1, 1 and 2 ranks.
      {"4ranks_0122", 4, "0,1,2,2", {0, 1, 2, 2}, "", true, Density::kFull},
      // The same over tcp.
      {"4ranks_0122_tcp",
       4,
       "0,1,2,2",
       {0, 1, 2, 2},
       "tcp",
       true,
       Density::kFull},
      // The same over UCX on one host (its shared-memory transports).
      {"4ranks_0122_ucx",
       4,
       "0,1,2,2",
       {0, 1, 2, 2},
       "ucx",
       true,
       Density::kFull},
      // Three interleaved domains; the default chunk (the large case fits
      // in one chunk, so the unpipelined path runs with three domains).
      {"5ranks_01220_defaultchunk",
       5,
       "0,1,2,2,0",
       {0, 1, 2, 2, 0},
       "",
       false,
       Density::kMedium},
      // 2 + 2 with the shm links moved by a progress thread
      // (HETCCL_SHM_LINK_THREAD=1; auto takes it only with cores to
      // spare), CPU ranks and emulated GPU ranks.
      {"4ranks_0011_shm_thread",
       4,
       "0,0,1,1",
       {0, 0, 1, 1},
       "",
       true,
       Density::kMedium,
       false,
       {},
       {{"HETCCL_SHM_LINK_THREAD", "1"}}},
      {"4ranks_0011_gpu_shm_thread",
       4,
       "0,0,1,1",
       {0, 0, 1, 1},
       "",
       true,
       Density::kMedium,
       true,
       {},
       {{"HETCCL_SHM_LINK_THREAD", "1"}}},
      // Three interleaved domains of 2: a reduce-scatter's blocks cross
      // to the matching rank of each other domain.
      {"6ranks_012012",
       6,
       "0,1,2,0,1,2",
       {0, 1, 2, 0, 1, 2},
       "",
       true,
       Density::kMedium},
      // GPU ranks (emulated on the host): the GPU engine's plans, staging
      // and proxy, 2 + 2 over shm and 1 + 1 + 2 over tcp. Transfers of a
      // piece up to 64K (all but the large ones here) are copied by
      // kernels; over tcp the cut-off is 2K, so that launches take both
      // ways, and a lane one after the other.
      {"4ranks_0011_gpu",
       4,
       "0,0,1,1",
       {0, 0, 1, 1},
       "",
       true,
       Density::kFull,
       true},
      {"4ranks_0122_tcp_gpu",
       4,
       "0,1,2,2",
       {0, 1, 2, 2},
       "tcp",
       true,
       Density::kMedium,
       true,
       {},
       {{"HETCCL_STAGED_LL_MAX", "2K"}}},
      // Every GPU rank's streams in one hardware queue
      // (HETCCL_EMULATED_QUEUES=1, as CUDA_DEVICE_MAX_CONNECTIONS=1 on a
      // GPU): its work runs in the order it was enqueued, whatever the
      // stream, so a wait for a peer enqueued before the work the peer
      // needs from this rank never ends. Over tcp, staged and by kernels;
      // 2 + 2 over shm (the stream-driven outboxes).
      {"4ranks_0123_tcp_gpu_one_queue",
       4,
       "0,1,2,3",
       {0, 1, 2, 3},
       "tcp",
       true,
       Density::kMedium,
       true,
       {},
       {{"HETCCL_EMULATED_QUEUES", "1"}, {"HETCCL_STAGED_LL_MAX", "2K"}}},
      {"4ranks_0011_gpu_one_queue",
       4,
       "0,0,1,1",
       {0, 0, 1, 1},
       "",
       true,
       Density::kMedium,
       true,
       {},
       {{"HETCCL_EMULATED_QUEUES", "1"}}},
      // Every other launch said to be captured and run once, as a graph's
      // replay (HETCCL_EMULATED_CAPTURES): its pieces numbered from 0 and
      // handed to the proxy by its stream; each rank its domain's only GPU,
      // as a capture needs. Over tcp, and over UCX taking the GPU buffers.
      {"4ranks_0123_tcp_gpu_captured",
       4,
       "0,1,2,3",
       {0, 1, 2, 3},
       "tcp",
       true,
       Density::kMedium,
       true,
       {},
       {{"HETCCL_EMULATED_CAPTURES", "1"}}},
      {"4ranks_0123_ucx_hosts_gpu_captured",
       4,
       "0,1,2,3",
       {0, 1, 2, 3},
       "ucx",
       true,
       Density::kMedium,
       true,
       {},
       {{"HETCCL_HOSTID", "A,B,C,D"},
        {"UCX_TLS", "tcp"},
        {"HETCCL_EMULATED_CAPTURES", "1"}}},
      // GPU ranks on three pretend hosts linked by UCX over tcp only. An
      // emulated GPU's memory is host memory, which UCX moves: its
      // buffers go to UCX as they are (HETCCL_UCX_GPU=auto), or they are
      // staged.
      {"4ranks_0122_ucx_hosts_gpu",
       4,
       "0,1,2,2",
       {0, 1, 2, 2},
       "ucx",
       true,
       Density::kMedium,
       true,
       {},
       {{"HETCCL_HOSTID", "A,B,C,C"}, {"UCX_TLS", "tcp"}}},
      {"4ranks_0122_ucx_hosts_gpu_staged",
       4,
       "0,1,2,2",
       {0, 1, 2, 2},
       "ucx",
       true,
       Density::kMedium,
       true,
       {},
       {{"HETCCL_HOSTID", "A,B,C,C"},
        {"UCX_TLS", "tcp"},
        {"HETCCL_UCX_GPU", "0"}}},
      // CPU ranks and GPU ranks in one communicator, two domains by
      // runtime: the GPU engine's staged links meet the host plans' links.
      {"4ranks_cpu_and_gpu",
       4,
       "",
       {0, 1, 0, 1},
       "",
       true,
       Density::kFull,
       false,
       {1, 3}},
      {"3ranks_cpu_and_gpu_tcp",
       3,
       "",
       {0, 1, 1},
       "tcp",
       true,
       Density::kMedium,
       false,
       {0}},
      // The same with nothing set: the link is measured at init and every
      // rank's engine, the GPU engine's and the host engine's, times its
      // hop across before the plans are chosen again.
      {"3ranks_cpu_and_gpu_tcp_cost_model",
       3,
       "",
       {0, 1, 1},
       "tcp",
       false,
       Density::kMedium,
       false,
       {0}},
      // Pieces of 384 KiB (a chunk of 1.5 MiB), above the smallest piece:
      // the largest transfers are cut alike by the GPU rank, whose buffers
      // go to UCX as they are, and by the CPU ranks.
      {"3ranks_cpu_and_gpu_ucx_wide_pieces",
       3,
       "",
       {0, 1, 1},
       "ucx",
       false,
       Density::kMedium,
       false,
       {0},
       {{"HETCCL_CHUNK", "1536K"}, {"HETCCL_ONE_SHOT_MAX", "32K"}}},
      // Three contiguous domains of 3, 3 and 2 ranks.
      {"8ranks_split3",
       8,
       "split:3",
       {0, 0, 0, 1, 1, 1, 2, 2},
       "",
       true,
       Density::kMedium},
  };
}

std::vector<HeteroParam> allParams() {
  std::vector<HeteroParam> params;
  for (const Layout& layout : allLayouts()) {
    for (Collective collective : allCollectives()) {
      params.push_back({layout, collective});
    }
  }
  return params;
}

INSTANTIATE_TEST_SUITE_P(Mp, HeteroCollectivesTest,
                         ::testing::ValuesIn(allParams()),
                         [](const ::testing::TestParamInfo<HeteroParam>& info) {
                           return info.param.name();
                         });

// Every collective kind, twice, in one group, with a multi-chunk
// all-reduce among them: the plans of one group run back to back over the
// same links, so each must leave the links as the next one expects.
std::vector<CollectiveCase> groupedCases(int nranks, bool onStream) {
  const ncclDataType_t types[] = {ncclFloat32, ncclInt8, ncclBfloat16,
                                  ncclUint64, ncclFloat8e5m2};
  const TestOp ops[] = {TestOp::kSum, TestOp::kPreMulSumHost,   TestOp::kMin,
                        TestOp::kAvg, TestOp::kPreMulSumDevice, TestOp::kProd};
  std::vector<CollectiveCase> cases;
  for (int repeat = 0; repeat < 2; ++repeat) {
    for (Collective collective : allCollectives()) {
      size_t index = cases.size();
      CollectiveCase c;
      c.collective = collective;
      c.type = types[index % 5];
      c.op = ops[index % 6];
      c.count = kPrimes[index % 6] + repeat * kAwkwardCount;
      c.inPlace = supportsInPlace(collective) && index % 3 == 1;
      c.root = static_cast<int>((index * 3) % nranks);
      c.onStream = onStream;
      c.seed = mixBits(0x96, index, nranks);
      cases.push_back(c);
    }
  }
  CollectiveCase large = cases.front();
  large.type = ncclFloat32;
  large.op = TestOp::kSum;
  large.count = kLargeBytes / 4 + 5;
  large.seed = 0x1a76e;
  cases.insert(cases.begin() + 4, large);
  return cases;
}

void runGroup(RankContext& ctx, const Layout& layout, bool onStream) {
  std::vector<CollectiveCase> cases = groupedCases(ctx.nranks(), onStream);
  Comm comm(ctx.initComm());
  checkDomains(comm.get(), layout, ctx.rank());
  HostStream stream;
  std::vector<std::unique_ptr<CollectiveRun>> runs;
  MP_CHECK_NCCL(ncclGroupStart());
  for (const CollectiveCase& c : cases) {
    runs.push_back(std::make_unique<CollectiveRun>(c, comm.get(), ctx.rank(),
                                                   ctx.nranks()));
    MP_CHECK_NCCL(runs.back()->issue(onStream ? stream.get() : nullptr))
        << c.describe();
  }
  MP_CHECK_NCCL(ncclGroupEnd());
  if (onStream) stream.synchronize();
  std::vector<uint64_t> hashes;
  for (size_t i = 0; i < runs.size(); ++i) {
    std::string problem = runs[i]->verify();
    MP_CHECK(problem.empty())
        << cases[i].describe() << " (in a group): " << problem;
    hashes.push_back(runs[i]->sharedOutputHash());
  }
  ctx.checkSameOnAllRanks(hashes,
                          [&](size_t i) { return cases[i].describe(); });
  comm.destroy();
}

struct GroupParam {
  Layout layout;
  bool onStream;

  std::string name() const {
    return layout.name + (onStream ? "_HostStream" : "_NullStream");
  }
};

void PrintTo(const GroupParam& param, std::ostream* out) {
  *out << param.name();
}

class HeteroGroupTest : public ::testing::TestWithParam<GroupParam> {};

TEST_P(HeteroGroupTest, EveryKindInOneGroup) {
  const GroupParam& param = GetParam();
  if (needsMissingUcx(param.layout))
    GTEST_SKIP() << "this build has no UCX module";
  runRanks(
      param.layout.nranks,
      [&](RankContext& ctx) { runGroup(ctx, param.layout, param.onStream); },
      optionsFor(param.layout));
}

std::vector<GroupParam> groupParams() {
  std::vector<GroupParam> params;
  bool onStream = false;
  for (const Layout& layout : allLayouts()) {
    if (layout.nranks < 4) continue;
    params.push_back({layout, onStream});
    onStream = !onStream;
  }
  return params;
}

INSTANTIATE_TEST_SUITE_P(Mp, HeteroGroupTest,
                         ::testing::ValuesIn(groupParams()),
                         [](const ::testing::TestParamInfo<GroupParam>& info) {
                           return info.param.name();
                         });

}  // namespace
}  // namespace hetccl::mp
