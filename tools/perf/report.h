// What hetccl-perf prints: the nccl-tests-style table on stdout (rank 0
// only), the optional JSON lines file, and the progress line on stderr.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "kit/dtype.h"
#include "perf/collectives.h"
#include "perf/options.h"
#include "perf/reduce_op.h"

namespace hetccl {
namespace perf {

struct PlacementResult {
  bool ran = false;
  double timeUs = 0;
  // Host time per launch call (the timed launches before the final
  // synchronisation): when it is close to timeUs, the host is the limit.
  double enqueueUs = 0;
  double algbwGBps = 0;
  double busbwGBps = 0;
  int64_t wrong = -1;  // -1: not checked
};

struct RowResult {
  const Collective* collective;
  const kit::DataType* type;
  const ReduceOp* op;  // nullptr for collectives that do not reduce
  int root;            // -1 for collectives without a root
  Shape shape;
  PlacementResult outOfPlace;
  PlacementResult inPlace;
};

// One rank's description for the "Using devices" lines. Fixed-size so that
// the ranks can all-gather it as bytes.
struct RankInfo {
  int32_t rank;
  int32_t pid;
  int32_t runtime;  // hetcclRuntimeKind_t
  int32_t ndomains;
  int32_t domain;
  char host[64];
  char device[64];
  char reserved[44];
};
static_assert(sizeof(RankInfo) == 192, "RankInfo is exchanged as bytes");

// Facts for the header lines.
struct RunDescription {
  int nranks;
  int libraryVersion;    // ncclGetVersion
  std::string library;   // NcclApi::describe() of the library under test
  std::string launcher;  // who started the ranks
  double initSeconds;    // ncclCommInitRank on rank 0
  // HetCCL's map of the communicator (hetcclCommTopology), if it has one.
  std::string topology;
};

class Reporter {
 public:
  // Only the printing rank writes anything; the others keep the totals.
  Reporter(const Options& options, bool printing);

  void printHeader(const RunDescription& run,
                   const std::vector<RankInfo>& ranks);
  void beginTable(const Collective& collective);
  void printRow(const RowResult& row);
  void printSummary();

  int64_t totalWrong() const { return totalWrong_; }

 private:
  void writeJson(const RowResult& row, const PlacementResult& result,
                 bool inPlace);

  struct FileCloser {
    void operator()(FILE* file) const { std::fclose(file); }
  };

  const Options& options_;
  int nranks_ = 1;
  int libraryVersion_ = 0;
  bool printing_;
  std::unique_ptr<FILE, FileCloser> json_;
  int64_t totalWrong_ = 0;
  double busbwSum_ = 0;
  int busbwCount_ = 0;
};

// "[ 12/30] allreduce 64MB float32 sum ..." on stderr: rewritten in place on
// a terminal, one line per step when forced with --progress.
class Progress {
 public:
  Progress(bool enabled, int total);
  ~Progress();
  void step(const std::string& what);
  // Erases the line on a terminal, before stdout prints a row.
  void clear();

 private:
  bool enabled_;
  bool terminal_;
  int total_;
  int done_ = 0;
  bool lineShown_ = false;
};

}  // namespace perf
}  // namespace hetccl
