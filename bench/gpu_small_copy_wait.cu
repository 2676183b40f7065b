// How long a small copy that waits on a host word takes once the host
// sets the word. The staged GPU engine copies each piece between GPU and
// pinned host memory on a staging stream, between a stream wait (the proxy
// says the piece arrived, or the slot is free) and a counter write (the
// proxy sees the copy done). Between pretend hosts on one H200, GPU ranks'
// send/recv took about 194 us up to 1 KiB and 52 us from 2 KiB
// (bench/results/ucx-net-lane-turns-h200-2026-12-06.md); this times that
// sequence alone, without HetCCL, at sizes around the boundary.
//
// Per size and way (host to device, device to host, device to device,
// and a one-block copy kernel for comparison): 200 rounds of (wait for word >=
// i, copy, write i to a second word) enqueued while the first word is below i;
// a helper thread sets it 200 us after the round starts, and this thread spins
// until the second word reads i. Printed: the median and 90th percentile
// of the time from the release to the second word, and of the copy's
// enqueue, in us.
//
// Build and run (nvcc, an NVIDIA GPU); two copies at once show what a
// second process on the GPU (as two ranks sharing it) does to the times:
//   nvcc -O2 -std=c++17 -o gpu_small_copy_wait bench/gpu_small_copy_wait.cu
//   -lcuda
//   ./gpu_small_copy_wait
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

void check(int status, const char* what) {
  if (status == 0) return;
  std::fprintf(stderr, "%s failed: %d\n", what, status);
  std::exit(1);
}

constexpr size_t kMaxBytes = 64 << 10;
constexpr int kRounds = 200;

struct Buffers {
  volatile uint32_t* words;  // [0]: released, [1]: copied (mapped)
  void* device;
  void* device2;
  void* host;
};

enum class Way { kToDevice, kToHost, kOnDevice, kKernel };

const char* nameOf(Way way) {
  switch (way) {
    case Way::kToDevice:
      return "to device";
    case Way::kToHost:
      return "to host";
    case Way::kOnDevice:
      return "on device";
    case Way::kKernel:
      return "kernel";
  }
  return "?";
}

__global__ void copyKernel(const uint4* from, uint4* to, size_t n) {
  for (size_t i = threadIdx.x; i < n; i += blockDim.x) to[i] = from[i];
}

void enqueueCopy(size_t bytes, Way way, cudaStream_t s, const Buffers& b) {
  switch (way) {
    case Way::kToDevice:
      check(cudaMemcpyAsync(b.device, b.host, bytes, cudaMemcpyDefault, s),
            "copy");
      return;
    case Way::kToHost:
      check(cudaMemcpyAsync(b.host, b.device, bytes, cudaMemcpyDefault, s),
            "copy");
      return;
    case Way::kOnDevice:
      check(cudaMemcpyAsync(b.device2, b.device, bytes, cudaMemcpyDefault, s),
            "copy");
      return;
    case Way::kKernel:
      copyKernel<<<1, 256, 0, s>>>(static_cast<const uint4*>(b.device),
                                   static_cast<uint4*>(b.device2),
                                   (bytes + 15) / 16);
      check(cudaGetLastError(), "kernel");
      return;
  }
}

CUdeviceptr wordAt(const Buffers& b, int i) {
  return reinterpret_cast<CUdeviceptr>(const_cast<uint32_t*>(b.words + i));
}

double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  return values[static_cast<size_t>(p * (values.size() - 1))];
}

struct Times {
  std::vector<double> done;     // from the release to the copy's counter
  std::vector<double> enqueue;  // the copy's enqueue
};

double microsecondsBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::micro>(to - from).count();
}

// A helper thread releases the wait 200 us after the round starts, so
// that a copy whose enqueue waits for the stream (it would with the
// release on this thread) shows as a long enqueue instead of a hang.
Times time(size_t bytes, Way way, cudaStream_t s, const Buffers& b,
           uint32_t& round) {
  auto cu = reinterpret_cast<CUstream>(s);
  Times times;
  for (int i = 0; i < kRounds; ++i) {
    const uint32_t n = ++round;
    Clock::time_point released;
    std::thread release([&] {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      released = Clock::now();
      std::atomic_thread_fence(std::memory_order_seq_cst);
      b.words[0] = n;
    });
    check(cuStreamWaitValue32(cu, wordAt(b, 0), n, CU_STREAM_WAIT_VALUE_GEQ),
          "wait");
    const Clock::time_point enqueued = Clock::now();
    enqueueCopy(bytes, way, s, b);
    times.enqueue.push_back(microsecondsBetween(enqueued, Clock::now()));
    check(cuStreamWriteValue32(cu, wordAt(b, 1), n, 0), "write");
    while (b.words[1] != n) {
    }
    const Clock::time_point copied = Clock::now();
    release.join();
    times.done.push_back(microsecondsBetween(released, copied));
  }
  return times;
}

}  // namespace

int main() {
  Buffers b{};
  uint32_t* words = nullptr;
  check(cudaHostAlloc(&words, 64, cudaHostAllocMapped), "host alloc");
  b.words = words;
  b.words[0] = b.words[1] = 0;
  check(cudaMalloc(&b.device, kMaxBytes), "device alloc");
  check(cudaMalloc(&b.device2, kMaxBytes), "device alloc");
  check(cudaHostAlloc(&b.host, kMaxBytes, 0), "host alloc");
  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  uint32_t round = 0;
  std::printf(
      "| bytes | way | release to copied: median | p90 | copy enqueue: median "
      "| p90 |\n|---:|---|---:|---:|---:|---:|\n");
  for (size_t bytes : {8, 512, 1024, 1025, 1536, 2048, 4096, 65536})
    for (Way way :
         {Way::kToDevice, Way::kToHost, Way::kOnDevice, Way::kKernel}) {
      const Times t = time(bytes, way, stream, b, round);
      std::printf("| %zu | %s | %.1f | %.1f | %.1f | %.1f |\n", bytes,
                  nameOf(way), percentile(t.done, 0.5), percentile(t.done, 0.9),
                  percentile(t.enqueue, 0.5), percentile(t.enqueue, 0.9));
    }
  check(cudaStreamSynchronize(stream), "synchronize");
  check(cudaStreamDestroy(stream), "stream destroy");
  check(cudaFreeHost(b.host), "free");
  check(cudaFree(b.device2), "free");
  check(cudaFree(b.device), "free");
  check(cudaFreeHost(words), "free");
  return 0;
}
