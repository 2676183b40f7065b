// Command-line options of hetccl-perf (nccl-tests names where they exist).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kit/dtype.h"
#include "perf/collectives.h"
#include "perf/reduce_op.h"

namespace hetccl {
namespace perf {

// How per-rank times are combined into the reported time (nccl-tests -a).
enum class TimeAverage { kRankZero = 0, kMean = 1, kMin = 2, kMax = 3 };

struct Options {
  std::vector<const Collective*> collectives;
  std::vector<const kit::DataType*> dataTypes;
  std::vector<const ReduceOp*> ops;
  size_t minBytes = size_t{32} << 20;
  size_t maxBytes = size_t{32} << 20;
  double stepFactor = 2;  // multiplicative step, used when stepBytes == 0
  size_t stepBytes = 0;   // additive step
  int warmupIters = 5;
  int iters = 20;
  int aggIters = 1;    // launches aggregated in one group per iteration
  int checkIters = 1;  // 0 disables the correctness check
  int root = 0;
  TimeAverage average = TimeAverage::kMean;
  bool blocking = false;  // synchronize after every launch
  bool runOutOfPlace = true;
  bool runInPlace = true;
  int localRanks = 0;         // -np: ranks to start on this host (0: none)
  int threadsPerProcess = 1;  // -t: ranks each process runs, one per thread
  double timeoutSec = 0;      // 0: no limit
  bool domainsGiven = false;
  std::string domains;  // HETCCL_DOMAINS for the ranks
  // --nccl-library: measure this NCCL-API library instead of the linked
  // HetCCL ("" : the linked HetCCL).
  std::string ncclLibrary;
  std::string jsonPath;
  bool progress = false;  // progress lines even when stderr is not a tty
  bool explain = false;   // print HetCCL's decisions (rank 0's) after the run
  bool showHelp = false;
  bool showVersion = false;
};

// Throws PerfError with a message that names the offending argument.
Options parseOptions(int argc, char** argv);

std::string helpText(const char* program);

// "1.5 KB"-style rendering for progress lines.
std::string formatBytes(size_t bytes);

// The requested sizes from minBytes to maxBytes.
std::vector<size_t> sizeSweep(const Options& options);

}  // namespace perf
}  // namespace hetccl
