// The ways a GPU can move data to and from pinned host memory, measured on
// every GPU at once: the copy engines (cudaMemcpyAsync) and the GPU's own
// cores loading or storing host memory mapped into its address space (a
// copy kernel). A heterogeneous all-reduce through host memory moves, on
// each GPU, the whole buffer out and the whole buffer in at the same time,
// so the figure that bounds it is "both directions at once"; this program
// says which combination of engines and kernels gives the most.
//
// Build and run (nvcc, one or more NVIDIA GPUs):
//   nvcc -O2 -std=c++17 -arch=native -o gpu_copy_paths bench/gpu_copy_paths.cu
//   ./gpu_copy_paths [MiB per copy, default 256]
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(status));
  std::exit(1);
}

// Grid-stride copy of 16-byte words; either side may be mapped host memory.
__global__ void copyWords(const int4* __restrict__ from, int4* __restrict__ to,
                          size_t words) {
  size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < words; i += stride)
    to[i] = from[i];
}

enum class Engine { None, CopyEngine, Kernel };

const char* engineName(Engine engine) {
  switch (engine) {
    case Engine::None:
      return "-";
    case Engine::CopyEngine:
      return "copy engine";
    case Engine::Kernel:
      return "kernel";
  }
  return "?";
}

// One GPU's buffers and the two streams that move them.
struct GpuLane {
  int device = 0;
  void* deviceOut = nullptr;  // read by the device-to-host copy
  void* deviceIn = nullptr;   // written by the host-to-device copy
  void* hostOut = nullptr;    // pinned, mapped
  void* hostIn = nullptr;     // pinned, mapped
  cudaStream_t toHost = nullptr;
  cudaStream_t fromHost = nullptr;
};

struct Scenario {
  Engine toHost;
  Engine fromHost;
  int gpus;    // the first `gpus` GPUs take part
  int blocks;  // per copy kernel
};

void enqueue(const GpuLane& lane, Engine engine, bool toHost, size_t bytes,
             int blocks) {
  const void* from = toHost ? lane.deviceOut : lane.hostIn;
  void* to = toHost ? lane.hostOut : lane.deviceIn;
  cudaStream_t stream = toHost ? lane.toHost : lane.fromHost;
  if (engine == Engine::CopyEngine) {
    check(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDefault, stream),
          "cudaMemcpyAsync");
  } else if (engine == Engine::Kernel) {
    copyWords<<<blocks, 512, 0, stream>>>(static_cast<const int4*>(from),
                                          static_cast<int4*>(to), bytes / 16);
    check(cudaGetLastError(), "copy kernel launch");
  }
}

// GB/s per GPU and direction with the scenario's copies all running.
double measure(std::vector<GpuLane>& lanes, const Scenario& scenario,
               size_t bytes, int iterations) {
  auto synchronizeAll = [&] {
    for (int g = 0; g < scenario.gpus; ++g) {
      check(cudaSetDevice(lanes[g].device), "cudaSetDevice");
      check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    }
  };
  synchronizeAll();
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) {
    for (int g = 0; g < scenario.gpus; ++g) {
      check(cudaSetDevice(lanes[g].device), "cudaSetDevice");
      enqueue(lanes[g], scenario.toHost, true, bytes, scenario.blocks);
      enqueue(lanes[g], scenario.fromHost, false, bytes, scenario.blocks);
    }
  }
  synchronizeAll();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return static_cast<double>(bytes) * iterations / seconds / 1e9;
}

GpuLane makeLane(int device, size_t bytes) {
  GpuLane lane;
  lane.device = device;
  check(cudaSetDevice(device), "cudaSetDevice");
  check(cudaMalloc(&lane.deviceOut, bytes), "cudaMalloc");
  check(cudaMalloc(&lane.deviceIn, bytes), "cudaMalloc");
  check(cudaMemset(lane.deviceOut, 1, bytes), "cudaMemset");
  unsigned flags = cudaHostAllocPortable | cudaHostAllocMapped;
  check(cudaHostAlloc(&lane.hostOut, bytes, flags), "cudaHostAlloc");
  check(cudaHostAlloc(&lane.hostIn, bytes, flags), "cudaHostAlloc");
  check(cudaStreamCreateWithFlags(&lane.toHost, cudaStreamNonBlocking),
        "cudaStreamCreate");
  check(cudaStreamCreateWithFlags(&lane.fromHost, cudaStreamNonBlocking),
        "cudaStreamCreate");
  return lane;
}

}  // namespace

int main(int argc, char** argv) {
  size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 256;
  size_t bytes = mib << 20;
  int gpus = 0;
  check(cudaGetDeviceCount(&gpus), "cudaGetDeviceCount");
  std::vector<GpuLane> lanes;
  for (int g = 0; g < gpus; ++g) lanes.push_back(makeLane(g, bytes));

  const Engine ce = Engine::CopyEngine, k = Engine::Kernel, none = Engine::None;
  const std::vector<Scenario> scenarios = {
      {ce, none, gpus, 0}, {none, ce, gpus, 0}, {ce, ce, gpus, 0},
      {ce, ce, 1, 0},      {k, none, gpus, 32}, {none, k, gpus, 32},
      {k, k, gpus, 16},    {k, k, gpus, 32},    {k, k, gpus, 132},
      {ce, k, gpus, 32},   {k, ce, gpus, 32},   {k, k, 1, 32},
  };
  std::printf("%zu MiB per copy, %d GPU(s) in the machine\n", mib, gpus);
  std::printf("%-12s %-12s %5s %7s %12s\n", "to host", "from host", "gpus",
              "blocks", "GB/s each");
  for (const Scenario& scenario : scenarios) {
    measure(lanes, scenario, bytes, 2);  // warm-up
    double rate = measure(lanes, scenario, bytes, 10);
    std::printf("%-12s %-12s %5d %7d %12.1f\n", engineName(scenario.toHost),
                engineName(scenario.fromHost), scenario.gpus, scenario.blocks,
                rate);
    std::fflush(stdout);
  }
  return 0;
}
