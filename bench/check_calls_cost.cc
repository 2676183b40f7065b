// What HETCCL_CHECK_CALLS=1 adds to a launch of a communicator that HetCCL
// hands whole to the vendor library: the ranks' comparison of their calls
// over the bootstrap before the library sees them. One process, two ranks
// on a thread each (cudaSetDevice 0 and 1), two communicators of the same
// ranks (one made with the check off, one with it on) taking turns round
// by round; every launch is a small all-reduce. The vendor library is the
// one HETCCL_NCCL_LIBRARY names; built with the tests, it defaults to the
// stand-in NCCL of tests/fake_vendor (host buffers, no GPU), so what it
// measures on a CPU machine is the check's host round trip plus the
// stand-in's own meeting of the ranks, which both sides pay.
//
// Usage: check-calls-cost [rounds, 11] [launches per round, 2000]
// Prints, per side, the median time per launch over the rounds and the
// difference. Not a test: run it on a quiet machine.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "nccl.h"

extern "C" int cudaSetDevice(int device);

namespace {

constexpr int kRanks = 2;
constexpr size_t kCount = 256;

void ncclOk(ncclResult_t result, const char* what) {
  if (result == ncclSuccess) return;
  std::printf("FAIL %s: %s\n", what, ncclGetLastError(nullptr));
  std::exit(1);
}

std::vector<ncclComm_t> makeComms(const char* checkCalls) {
  setenv("HETCCL_CHECK_CALLS", checkCalls, 1);
  std::vector<ncclComm_t> comms(kRanks);
  ncclOk(ncclCommInitAll(comms.data(), kRanks, nullptr), "ncclCommInitAll");
  return comms;
}

// Microseconds per launch of `launches` all-reduces on every rank at once
// (the slower rank's).
double perLaunch(const std::vector<ncclComm_t>& comms, int launches) {
  std::vector<double> seconds(kRanks);
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r)
    threads.emplace_back([&, r] {
      cudaSetDevice(r);
      std::vector<float> data(kCount, 1.0f);
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < launches; ++i)
        ncclOk(ncclAllReduce(data.data(), data.data(), kCount, ncclFloat32,
                             ncclSum, comms[r], nullptr),
               "ncclAllReduce");
      seconds[r] = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
    });
  for (std::thread& thread : threads) thread.join();
  return *std::max_element(seconds.begin(), seconds.end()) * 1e6 / launches;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 11;
  const int launches = argc > 2 ? std::atoi(argv[2]) : 2000;
  setenv("HETCCL_NCCL_LIBRARY", FAKE_NCCL_PATH, /*overwrite=*/0);
  const std::vector<ncclComm_t> off = makeComms("0");
  const std::vector<ncclComm_t> on = makeComms("1");
  std::vector<double> offTimes, onTimes;
  for (int round = 0; round < rounds; ++round) {
    offTimes.push_back(perLaunch(off, launches));
    onTimes.push_back(perLaunch(on, launches));
  }
  const double offMedian = median(offTimes), onMedian = median(onTimes);
  std::printf(
      "%d ranks, %zu-float all-reduce, %d rounds of %d launches, library "
      "%s\n",
      kRanks, kCount, rounds, launches, std::getenv("HETCCL_NCCL_LIBRARY"));
  std::printf("check off: %.2f us per launch (median; rounds %.2f to %.2f)\n",
              offMedian, *std::min_element(offTimes.begin(), offTimes.end()),
              *std::max_element(offTimes.begin(), offTimes.end()));
  std::printf("check on:  %.2f us per launch (median; rounds %.2f to %.2f)\n",
              onMedian, *std::min_element(onTimes.begin(), onTimes.end()),
              *std::max_element(onTimes.begin(), onTimes.end()));
  std::printf("the check adds %.2f us per launch\n", onMedian - offMedian);
  for (const auto& comms : {off, on})
    for (ncclComm_t comm : comms) ncclOk(ncclCommDestroy(comm), "destroy");
  return 0;
}
