// The measurement loop shared by the peer benchmarks, with nccl-tests'
// semantics: for each size, check the result once, run warm-up iterations,
// then time a run of iterations between a barrier and the last completion;
// the time reported is the mean per iteration, the maximum over ranks.
#ifndef HETCCL_BENCH_PEERS_ALLREDUCE_SWEEP_H_
#define HETCCL_BENCH_PEERS_ALLREDUCE_SWEEP_H_

#include <cstddef>
#include <string>

#include "sweep_options.h"

namespace hetccl::bench {

// What a peer library must provide for the sweep. Every call is collective:
// all ranks make it in the same order.
class HostCommunicator {
 public:
  virtual ~HostCommunicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual void barrier() = 0;
  // recv[i] = sum over ranks of send[i], for i < count; out of place.
  virtual void allreduceSum(const float* send, float* recv, size_t count) = 0;
  // The largest `value` any rank passed.
  virtual double maxOverRanks(double value) = 0;
};

// One measured size, in the fields of the shared JSON line format.
struct AllreduceResult {
  size_t bytes = 0;
  double timeUs = 0;
  double algbwGBps = 0;  // bytes / time, GB = 1e9 bytes
  double busbwGBps = 0;  // algbw * 2 (n - 1) / n
  size_t wrongElements = 0;
};

// The shared JSON line: {"impl":...,"coll":"allreduce",...} (no newline).
std::string formatJsonLine(const std::string& impl, int nranks,
                           const AllreduceResult& result);

// Runs the sweep; rank 0 prints an nccl-tests-style table to stdout and
// writes JSON lines to options.jsonPath when set. Returns the process exit
// status: 0 when every check passed on every rank, 1 otherwise.
int runAllreduceSweep(HostCommunicator& comm, const std::string& impl,
                      const SweepOptions& options);

}  // namespace hetccl::bench

#endif  // HETCCL_BENCH_PEERS_ALLREDUCE_SWEEP_H_
