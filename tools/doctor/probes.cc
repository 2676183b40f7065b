#include "doctor/probes.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "perf/device.h"

namespace hetccl {
namespace doctor {
namespace {

constexpr int kLatencyIters = 20;
constexpr int kBandwidthIters = 4;

using Clock = std::chrono::steady_clock;

// Seconds per all-reduce of `bytes` on `comm`, after one untimed.
double timeAllReduce(const perf::RankContext& job, ncclComm_t comm,
                     void* buffer, size_t bytes, int iters) {
  const size_t count = bytes / sizeof(float);
  auto run = [&] {
    job.nccl->check(job.nccl->allReduce(buffer, buffer, count, ncclFloat,
                                        ncclSum, comm, job.stream),
                    "ncclAllReduce", comm);
  };
  run();
  job.device->synchronize(job.stream, comm);
  const auto start = Clock::now();
  for (int i = 0; i < iters; ++i) run();
  job.device->synchronize(job.stream, comm);
  return std::chrono::duration<double>(Clock::now() - start).count() / iters;
}

// This rank's part of one probe: its seconds per small and large
// all-reduce (0 when not a member); false when it failed here.
bool measure(const perf::RankContext& job, bool member, size_t bytes,
             double* small, double* large, const char* what) {
  ncclComm_t comm = nullptr;
  try {
    job.nccl->check(ncclCommSplit(job.comm, member ? 1 : NCCL_SPLIT_NOCOLOR,
                                  job.rank, &comm, nullptr),
                    "ncclCommSplit", job.comm);
    if (!member) return true;
    perf::DeviceBuffer buffer(*job.device, bytes);
    *small = timeAllReduce(job, comm, buffer.get(), sizeof(float) * 2,
                           kLatencyIters);
    *large = timeAllReduce(job, comm, buffer.get(), bytes, kBandwidthIters);
    job.nccl->check(job.nccl->commDestroy(comm), "ncclCommDestroy", comm);
    return true;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hetccl-doctor: rank %d: the probe of %s failed: %s\n",
                 job.rank, what, e.what());
    if (comm != nullptr) job.nccl->commAbort(comm);
    return false;
  }
}

}  // namespace

std::vector<Probe> probeDomainsAndLinks(const perf::RankContext& job,
                                        perf::Control& control,
                                        const std::vector<int>& domainOf,
                                        size_t bytes) {
  int ndomains = 0;
  for (int domain : domainOf) ndomains = std::max(ndomains, domain + 1);
  std::vector<Probe> probes;
  // Domain `a` alone (b = -1), or domains a and b.
  auto probeOne = [&](int a, int b) {
    Probe probe;
    probe.domainA = a;
    probe.domainB = b;
    for (int domain : domainOf) probe.ranks += domain == a || domain == b;
    if (probe.ranks < 2) return;  // a domain of one rank has no library step
    const int mine = domainOf[job.rank];
    const std::string what =
        b < 0 ? "domain " + std::to_string(a)
              : "domains " + std::to_string(a) + " and " + std::to_string(b);
    double small = 0, large = 0;
    const bool ok = measure(job, mine == a || mine == b, bytes, &small, &large,
                            what.c_str());
    probe.failed = control.allReduce(ok ? 0 : 1, ncclMax) > 0;
    small = control.allReduce(small, ncclMax);
    large = control.allReduce(large, ncclMax);
    if (!probe.failed) {
      probe.latencyUs = small * 1e6;
      const double algbw = static_cast<double>(bytes) / large / 1e9;
      probe.busbwGBps = algbw * 2 * (probe.ranks - 1) / probe.ranks;
    }
    probes.push_back(probe);
  };
  for (int a = 0; a < ndomains; ++a) probeOne(a, -1);
  for (int a = 0; a < ndomains; ++a)
    for (int b = a + 1; b < ndomains; ++b) probeOne(a, b);
  return probes;
}

}  // namespace doctor
}  // namespace hetccl
