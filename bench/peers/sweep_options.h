// Command-line options shared by the peer benchmarks. The flags match
// hetccl-perf's (and so nccl-tests') where they mean the same thing, so
// that one driver can pass the same arguments to every implementation.
#ifndef HETCCL_BENCH_PEERS_SWEEP_OPTIONS_H_
#define HETCCL_BENCH_PEERS_SWEEP_OPTIONS_H_

#include <cstddef>
#include <string>

namespace hetccl::bench {

struct SweepOptions {
  size_t minBytes = 1024;
  size_t maxBytes = 256u << 20;
  size_t factor = 2;     // each size is the previous one times this
  int warmupIters = 5;   // untimed iterations before each size's timing
  int timedIters = 20;   // timed iterations whose mean is reported
  std::string jsonPath;  // where JSON lines go; empty: nowhere
  int nranks = 0;        // processes to fork (launchers that fork only)
  int timeoutSeconds = 600;
};

// Parses argv. `acceptNp` says whether -np N is allowed (programs that
// start their own ranks) or not (programs started by mpirun). Prints usage
// and exits on -h or on a bad argument.
SweepOptions parseSweepOptions(int argc, char** argv, bool acceptNp);

}  // namespace hetccl::bench

#endif  // HETCCL_BENCH_PEERS_SWEEP_OPTIONS_H_
