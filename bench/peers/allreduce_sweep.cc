#include "allreduce_sweep.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <vector>

namespace hetccl::bench {
namespace {

// Small integers times (rank + 1): every partial sum is an exact float, so
// the check can demand equality whatever order a library adds in.
float inputValue(int rank, size_t index) {
  return static_cast<float>((rank + 1) * (1 + index % 13));
}

float expectedSum(int nranks, size_t index) {
  return static_cast<float>((1 + index % 13) * nranks * (nranks + 1) / 2);
}

// The buffers are sized for the largest message once, and every page is
// written before timing, so that first-touch faults are not measured.
struct Buffers {
  std::vector<float> send;
  std::vector<float> recv;

  Buffers(int rank, size_t maxCount) : send(maxCount), recv(maxCount, 0.0f) {
    for (size_t i = 0; i < maxCount; ++i) send[i] = inputValue(rank, i);
  }
};

size_t countWrong(const std::vector<float>& recv, size_t count, int nranks) {
  size_t wrong = 0;
  for (size_t i = 0; i < count; ++i) {
    if (recv[i] != expectedSum(nranks, i)) ++wrong;
  }
  return wrong;
}

// Runs once on poisoned output and counts wrong elements over all ranks.
size_t checkOnce(HostCommunicator& comm, Buffers& buffers, size_t count) {
  std::fill(buffers.recv.begin(), buffers.recv.begin() + count, -1.0f);
  comm.allreduceSum(buffers.send.data(), buffers.recv.data(), count);
  size_t wrong = countWrong(buffers.recv, count, comm.size());
  return static_cast<size_t>(comm.maxOverRanks(static_cast<double>(wrong)));
}

// Mean seconds per iteration on this rank.
double timeIterations(HostCommunicator& comm, Buffers& buffers, size_t count,
                      const SweepOptions& options) {
  for (int i = 0; i < options.warmupIters; ++i)
    comm.allreduceSum(buffers.send.data(), buffers.recv.data(), count);
  comm.barrier();
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < options.timedIters; ++i)
    comm.allreduceSum(buffers.send.data(), buffers.recv.data(), count);
  std::chrono::duration<double> elapsed =
      std::chrono::steady_clock::now() - start;
  return elapsed.count() / options.timedIters;
}

AllreduceResult measureSize(HostCommunicator& comm, Buffers& buffers,
                            size_t count, const SweepOptions& options) {
  AllreduceResult result;
  result.bytes = count * sizeof(float);
  result.wrongElements = checkOnce(comm, buffers, count);
  double seconds =
      comm.maxOverRanks(timeIterations(comm, buffers, count, options));
  int n = comm.size();
  result.timeUs = seconds * 1e6;
  result.algbwGBps = static_cast<double>(result.bytes) / seconds / 1e9;
  result.busbwGBps = result.algbwGBps * 2.0 * (n - 1) / n;
  return result;
}

void printHeader(const std::string& impl, int nranks) {
  std::printf("# %s all-reduce, %d ranks, float32 sum, out of place\n",
              impl.c_str(), nranks);
  std::printf("# %12s %12s %12s %12s %12s %8s\n", "size(B)", "count",
              "time(us)", "algbw(GB/s)", "busbw(GB/s)", "#wrong");
}

void printRow(const AllreduceResult& r) {
  std::printf("  %12zu %12zu %12.2f %12.3f %12.3f %8zu\n", r.bytes,
              r.bytes / sizeof(float), r.timeUs, r.algbwGBps, r.busbwGBps,
              r.wrongElements);
  std::fflush(stdout);
}

}  // namespace

std::string formatJsonLine(const std::string& impl, int nranks,
                           const AllreduceResult& result) {
  char line[512];
  std::snprintf(line, sizeof(line),
                "{\"impl\":\"%s\",\"coll\":\"allreduce\",\"nranks\":%d,"
                "\"bytes\":%zu,\"dtype\":\"float32\",\"op\":\"sum\","
                "\"time_us\":%.3f,\"algbw_GBps\":%.4f,\"busbw_GBps\":%.4f}",
                impl.c_str(), nranks, result.bytes, result.timeUs,
                result.algbwGBps, result.busbwGBps);
  return line;
}

int runAllreduceSweep(HostCommunicator& comm, const std::string& impl,
                      const SweepOptions& options) {
  const bool leader = comm.rank() == 0;
  std::ofstream json;
  if (leader && !options.jsonPath.empty()) {
    json.open(options.jsonPath, std::ios::trunc);
    if (!json) throw std::runtime_error("cannot write " + options.jsonPath);
  }
  Buffers buffers(comm.rank(), options.maxBytes / sizeof(float));
  if (leader) printHeader(impl, comm.size());
  size_t totalWrong = 0;
  for (size_t bytes = options.minBytes; bytes <= options.maxBytes;
       bytes *= options.factor) {
    AllreduceResult result =
        measureSize(comm, buffers, bytes / sizeof(float), options);
    totalWrong += result.wrongElements;
    if (leader) {
      printRow(result);
      if (json.is_open())
        json << formatJsonLine(impl, comm.size(), result) << '\n' << std::flush;
    }
  }
  if (leader && totalWrong > 0)
    std::printf("# FAILED: %zu wrong elements\n", totalWrong);
  return totalWrong == 0 ? 0 : 1;
}

}  // namespace hetccl::bench
