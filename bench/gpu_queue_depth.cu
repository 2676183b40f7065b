// How much work a CUDA stream holds before an enqueue blocks the calling
// thread. The staged GPU engine enqueues a launch's whole GPU work at
// once: per staged piece a copy, a counter write and a wait, on the
// engine's stream and two staging streams. A 256 MB all-reduce between
// pretend hosts held its calling thread about half the operation, and
// four times fewer chunks made that go away; this says at how many
// operations of each kind, per stream and over several streams, CUDA
// starts to make the caller wait.
//
// Each case holds its streams behind a stream wait on a pinned word that
// a helper thread sets after 400 ms, then enqueues 6,000 operations of one
// kind (round robin over the streams) and reports the first whose enqueue
// took more than 50 ms: the queue was full there, and the call waited for
// the release.
//
// Build and run (nvcc, an NVIDIA GPU):
//   nvcc -O2 -std=c++17 -o gpu_queue_depth bench/gpu_queue_depth.cu -lcuda
//   ./gpu_queue_depth
#include <cuda.h>
#include <cuda_runtime.h>

#include <chrono>
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

__global__ void emptyKernel() {}

enum class Kind {
  kKernel,
  kCopyToHost,
  kWriteValue,
  kWaitValuePassed,
  kEventRecord,
  kWaitEvent,
  kStagedSend,     // copy to host, counter write: a staged send's piece
  kStagedReceive,  // wait, copy from host, counter write: a receive's
};

const char* nameOf(Kind kind) {
  switch (kind) {
    case Kind::kKernel:
      return "kernel";
    case Kind::kCopyToHost:
      return "copy 64K to host";
    case Kind::kWriteValue:
      return "writeValue64";
    case Kind::kWaitValuePassed:
      return "waitValue64 (passed)";
    case Kind::kEventRecord:
      return "eventRecord";
    case Kind::kWaitEvent:
      return "streamWaitEvent";
    case Kind::kStagedSend:
      return "send piece (copy, write)";
    case Kind::kStagedReceive:
      return "receive piece (wait, copy, write)";
  }
  return "?";
}

struct Buffers {
  uint64_t* words;  // [0] the gate, [2] written, [3] waited for (0)
  void* device;
  void* host;
  cudaEvent_t event;
};

constexpr size_t kCopyBytes = 64 << 10;

CUdeviceptr wordAt(const Buffers& b, int i) {
  return reinterpret_cast<CUdeviceptr>(b.words + i);
}

// The i-th operation of `kind` on `stream`.
void enqueue(Kind kind, int i, cudaStream_t stream, const Buffers& b) {
  auto cu = reinterpret_cast<CUstream>(stream);
  switch (kind) {
    case Kind::kKernel:
      emptyKernel<<<1, 32, 0, stream>>>();
      return check(cudaGetLastError(), "kernel launch");
    case Kind::kCopyToHost:
      return check(cudaMemcpyAsync(b.host, b.device, kCopyBytes,
                                   cudaMemcpyDeviceToHost, stream),
                   "copy");
    case Kind::kWriteValue:
      return check(cuStreamWriteValue64(cu, wordAt(b, 2), i, 0), "write");
    case Kind::kWaitValuePassed:
      return check(
          cuStreamWaitValue64(cu, wordAt(b, 3), 0, CU_STREAM_WAIT_VALUE_GEQ),
          "wait");
    case Kind::kEventRecord:
      return check(cudaEventRecord(b.event, stream), "event record");
    case Kind::kWaitEvent:
      return check(cudaStreamWaitEvent(stream, b.event, 0), "event wait");
    case Kind::kStagedSend:
      return enqueue(i % 2 ? Kind::kCopyToHost : Kind::kWriteValue, i, stream,
                     b);
    case Kind::kStagedReceive:
      if (i % 3 == 0) return enqueue(Kind::kWaitValuePassed, i, stream, b);
      if (i % 3 == 2) return enqueue(Kind::kWriteValue, i, stream, b);
      return check(cudaMemcpyAsync(b.device, b.host, kCopyBytes,
                                   cudaMemcpyHostToDevice, stream),
                   "copy");
  }
}

// Returns the index of the first operation whose enqueue blocked (-1:
// none of `count`).
int firstBlocked(Kind kind, int nstreams, int count, const Buffers& b) {
  std::vector<cudaStream_t> streams(nstreams);
  for (cudaStream_t& stream : streams)
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
          "stream create");
  check(cudaEventRecord(b.event, streams[0]), "event record");
  check(cudaDeviceSynchronize(), "synchronize");
  __atomic_store_n(&b.words[0], 0, __ATOMIC_SEQ_CST);
  for (cudaStream_t stream : streams)
    check(cuStreamWaitValue64(reinterpret_cast<CUstream>(stream), wordAt(b, 0),
                              1, CU_STREAM_WAIT_VALUE_GEQ),
          "gate");
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    __atomic_store_n(&b.words[0], 1, __ATOMIC_SEQ_CST);
  });
  int blocked = -1;
  for (int i = 0; i < count; ++i) {
    const Clock::time_point start = Clock::now();
    enqueue(kind, i, streams[i % nstreams], b);
    const double ms =
        std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (ms > 50 && blocked < 0) blocked = i;
  }
  release.join();
  check(cudaDeviceSynchronize(), "synchronize");
  for (cudaStream_t stream : streams)
    check(cudaStreamDestroy(stream), "stream destroy");
  return blocked;
}

}  // namespace

int main() {
  Buffers b{};
  check(cudaHostAlloc(&b.words, 64, cudaHostAllocMapped), "host alloc");
  check(cudaMalloc(&b.device, kCopyBytes), "device alloc");
  check(cudaHostAlloc(&b.host, kCopyBytes, 0), "host alloc");
  check(cudaEventCreateWithFlags(&b.event, cudaEventDisableTiming),
        "event create");
  b.words[3] = 0;
  std::printf(
      "| operation | streams | first enqueue that waited | per stream |\n"
      "|---|---:|---:|---:|\n");
  for (int nstreams : {1, 3}) {
    for (Kind kind :
         {Kind::kKernel, Kind::kCopyToHost, Kind::kWriteValue,
          Kind::kWaitValuePassed, Kind::kEventRecord, Kind::kWaitEvent,
          Kind::kStagedSend, Kind::kStagedReceive}) {
      const int blocked = firstBlocked(kind, nstreams, 6000, b);
      if (blocked < 0)
        std::printf("| %s | %d | none of 6000 | - |\n", nameOf(kind), nstreams);
      else
        std::printf("| %s | %d | %d | %.0f |\n", nameOf(kind), nstreams,
                    blocked, static_cast<double>(blocked) / nstreams);
    }
  }
  return 0;
}
