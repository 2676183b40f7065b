#include "harness/case_batches.h"

#include <memory>
#include <string>

#include "harness/check.h"
#include "harness/nccl_handles.h"
#include "harness/run_ranks.h"
#include "hetccl.h"

namespace hetccl::mp {
namespace {

// Issues cases [first, last), which share a stream mode, then checks them
// all; appends their shared-output hashes.
void runBatch(const std::vector<CollectiveCase>& cases, size_t first,
              size_t last, ncclComm_t comm, const HostStream& stream,
              const RankContext& ctx, std::vector<uint64_t>* hashes) {
  std::vector<std::unique_ptr<CollectiveRun>> runs;
  for (size_t i = first; i < last; ++i) {
    runs.push_back(std::make_unique<CollectiveRun>(cases[i], comm, ctx.rank(),
                                                   ctx.nranks()));
    cudaStream_t s = cases[i].onStream ? stream.get() : nullptr;
    MP_CHECK_NCCL(runs.back()->issue(s)) << cases[i].describe();
  }
  if (cases[first].onStream) {
    MP_CHECK_NCCL(hetcclStreamSynchronize(stream.get()))
        << "after " << cases[first].describe() << " and the "
        << last - first - 1 << " cases after it";
  }
  for (size_t i = first; i < last; ++i) {
    std::string problem = runs[i - first]->verify();
    MP_CHECK(problem.empty()) << cases[i].describe() << ": " << problem;
    hashes->push_back(runs[i - first]->sharedOutputHash());
  }
}

}  // namespace

void runAndCheckCases(RankContext& ctx, ncclComm_t comm,
                      const std::vector<CollectiveCase>& cases,
                      size_t batchLimit) {
  HostStream stream;
  std::vector<uint64_t> hashes;
  size_t first = 0;
  while (first < cases.size()) {
    size_t last = first + 1;
    while (last < cases.size() && last - first < batchLimit &&
           cases[last].onStream == cases[first].onStream) {
      ++last;
    }
    runBatch(cases, first, last, comm, stream, ctx, &hashes);
    first = last;
  }
  ctx.checkSameOnAllRanks(hashes,
                          [&](size_t i) { return cases[i].describe(); });
}

void runCasesOnLayout(const DomainLayout& layout,
                      const std::vector<CollectiveCase>& cases,
                      size_t batchLimit,
                      const std::map<std::string, std::string>& env) {
  RunOptions options;
  options.timeoutSeconds = 200;
  layout.applyTo(&options);
  for (const auto& [name, value] : env) options.env[name] = value;
  runRanks(
      static_cast<int>(layout.labels.size()),
      [&](RankContext& ctx) {
        Comm comm(ctx.initComm());
        checkDomainCount(comm.get(), layout.count());
        runAndCheckCases(ctx, comm.get(), cases, batchLimit);
        comm.destroy();
      },
      options);
}

}  // namespace hetccl::mp
