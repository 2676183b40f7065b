// The pipelined reduce's two ways through the root's domain (reduce.cc):
// one pass of the domain's library over copies of the inputs, each with
// its range's partials from the other domains added (a plain reduction of
// several chunks), and two steps otherwise (a reduce-scatter, the
// partials combined, each range handed to the root: a buffer of one chunk,
// a premultiplied sum, an average, CPU ranks). With a chunk of 4 KiB,
// every type and op at counts of just under one chunk to several with a
// short last one, to every root in turn, in place and out of place, on
// emulated GPU ranks in even, uneven and three-domain layouts and with a
// root's domain of one rank, and on CPU ranks. Every output byte is
// checked.
#include <gtest/gtest.h>

#include <iterator>
#include <string>
#include <vector>

#include "harness/case_batches.h"
#include "harness/collective_case.h"
#include "harness/data.h"
#include "harness/domains.h"
#include "kit/dtype.h"

namespace hetccl::mp {
namespace {

constexpr size_t kChunkBytes = 4096;
constexpr size_t kStreamBatch = 4;

std::vector<CollectiveCase> reduceCases(int nranks) {
  std::vector<CollectiveCase> cases;
  for (const kit::DataType& type : kit::allDataTypes()) {
    const size_t perChunk = kChunkBytes / type.size;
    const size_t counts[] = {perChunk - 1, perChunk, perChunk + 1,
                             3 * perChunk + perChunk / 2 + 1};
    for (TestOp op : allTestOps()) {
      for (size_t count : counts) {
        CollectiveCase c;
        c.collective = Collective::kReduce;
        c.type = type.nccl;
        c.op = op;
        c.count = count;
        c.inPlace = cases.size() % 2 == 1;
        c.onStream = (cases.size() / kStreamBatch) % 2 == 1;
        // All four counts of a type and op go to one root, the next type
        // and op to the next.
        c.root = static_cast<int>(cases.size() / std::size(counts) % nranks);
        c.seed = mixBits(0x4ed0ce, cases.size(), nranks);
        cases.push_back(c);
      }
    }
  }
  return cases;
}

class ReducePlansTest : public ::testing::TestWithParam<DomainLayout> {};

TEST_P(ReducePlansTest, OnePassAndTwoStepsAtTheRootsDomain) {
  const DomainLayout& layout = GetParam();
  runCasesOnLayout(layout, reduceCases(static_cast<int>(layout.labels.size())),
                   kStreamBatch,
                   {{"HETCCL_CHUNK", std::to_string(kChunkBytes)},
                    {"HETCCL_ONE_SHOT_MAX", "0"}});
}

INSTANTIATE_TEST_SUITE_P(
    Mp, ReducePlansTest,
    ::testing::Values(domainsByLabel({0, 0, 1, 1}), domainsByLabel({0, 1, 1}),
                      emulatedGpuDomains({0, 0, 1, 1}),
                      emulatedGpuDomains({0, 0, 0, 1, 1}),
                      emulatedGpuDomains({0, 0, 1, 2}),
                      emulatedGpuDomains({0, 1, 1})),
    [](const ::testing::TestParamInfo<DomainLayout>& info) {
      return info.param.name();
    });

}  // namespace
}  // namespace hetccl::mp
