// Throughput of the host reduction engine (hostReduce), per dtype: how fast
// CPU ranks can combine buffers, the ceiling of host-domain reductions.
// Usage: host-reduce-bandwidth [MiB per buffer, default 64]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "runtime/host/host_reduce.h"
#include "util/dtype.h"

using hetccl::Reduction;

int main(int argc, char** argv) {
  const size_t bytes = (argc > 1 ? std::strtoul(argv[1], nullptr, 0) : 64)
                       << 20;
  struct Setup {
    ncclDataType_t dtype;
    int nsrcs;
  };
  const Setup setups[] = {
      {ncclFloat32, 2}, {ncclFloat32, 8},  {ncclFloat64, 2},   {ncclInt32, 2},
      {ncclFloat16, 2}, {ncclBfloat16, 2}, {ncclFloat8e4m3, 2}};
  std::printf("%-9s %6s %14s %14s\n", "dtype", "nsrcs", "output GB/s",
              "traffic GB/s");
  for (const Setup& setup : setups) {
    size_t count = bytes / hetccl::dtypeSize(setup.dtype);
    std::vector<std::vector<uint8_t>> sources(
        setup.nsrcs, std::vector<uint8_t>(bytes, 0x3c));
    std::vector<uint8_t> dst(bytes);
    std::vector<const void*> pointers;
    for (auto& source : sources) pointers.push_back(source.data());
    Reduction reduction{setup.dtype, ncclSum};
    double best = 1e30;
    for (int rep = 0; rep < 5; ++rep) {
      auto start = std::chrono::steady_clock::now();
      hetccl::hostReduce(dst.data(), pointers.data(), setup.nsrcs, count,
                         reduction);
      std::chrono::duration<double> elapsed =
          std::chrono::steady_clock::now() - start;
      best = std::min(best, elapsed.count());
    }
    std::printf("%-9s %6d %14.2f %14.2f\n", hetccl::dtypeName(setup.dtype),
                setup.nsrcs, bytes / best / 1e9,
                bytes * (setup.nsrcs + 1) / best / 1e9);
  }
  return 0;
}
