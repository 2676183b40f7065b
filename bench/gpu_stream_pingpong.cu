// What a hand-off between two streams of one GPU costs, eager and replayed
// from a CUDA graph, without HetCCL: the yardstick of #36's question
// whether the staged path's slow graph replays between two processes on
// one GPU are the GPU's (its turns between the processes' contexts) or
// HetCCL's.
//
// Two ranks (two processes, or two threads of one process with --threads)
// play ping-pong through two words of shared pinned host memory with
// stream memory operations, as HetCCL's streams wait for each other: in
// round i rank 0 writes its word = i and waits for rank 1's to be i; rank 1
// waits for rank 0's, then writes its own. Values run 1..K and repeat
// (waits for equality), so a graph of K rounds replays unchanged. Shapes:
//   plain   the waits and writes on the rank's stream;
//   forked  each round's wait on a second stream forked from the first and
//           joined back (events), as the staging streams hang off the
//           engine's stream;
//   kernel  plain, with a small kernel after each wait (compute between
//           hand-offs).
// Prints, per shape, microseconds per round eager and replayed (rank 0).
//
// Build (no CMake rule: it needs only the CUDA toolkit):
//   nvcc -O2 -o gpu_stream_pingpong bench/gpu_stream_pingpong.cu -lcuda
// Run: gpu_stream_pingpong [--threads] [rounds per graph, default 20]
#include <cuda.h>
#include <cuda_runtime.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace {

constexpr int kReplays = 200;
constexpr size_t kWordStride = 64;  // a cache line per rank's word

void check(cudaError_t result, const char* what) {
  if (result == cudaSuccess) return;
  std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(result));
  std::exit(2);
}

void check(CUresult result, const char* what) {
  if (result == CUDA_SUCCESS) return;
  const char* text = "?";
  cuGetErrorString(result, &text);
  std::fprintf(stderr, "%s: %s\n", what, text);
  std::exit(2);
}

__global__ void spin(float* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = data[i] * 1.0001f + 1.0f;
}

struct Rank {
  int rank;
  int rounds;
  CUdeviceptr mine, peers;  // the two words, as the GPU sees them
  cudaStream_t stream, side;
  cudaEvent_t forkAt, joinAt;
  float* scratch;
};

void waitPeer(const Rank& r, cudaStream_t s, int value) {
  check(cuStreamWaitValue64(s, r.peers, value, CU_STREAM_WAIT_VALUE_EQ),
        "cuStreamWaitValue64");
}

void writeMine(const Rank& r, int value) {
  check(cuStreamWriteValue64(r.stream, r.mine, value,
                             CU_STREAM_WRITE_VALUE_DEFAULT),
        "cuStreamWriteValue64");
}

// One round's wait, in the shape asked for.
void awaitPeer(const Rank& r, const std::string& shape, int value) {
  if (shape == "forked") {
    check(cudaEventRecord(r.forkAt, r.stream), "cudaEventRecord");
    check(cudaStreamWaitEvent(r.side, r.forkAt, 0), "cudaStreamWaitEvent");
    waitPeer(r, r.side, value);
    check(cudaEventRecord(r.joinAt, r.side), "cudaEventRecord");
    check(cudaStreamWaitEvent(r.stream, r.joinAt, 0), "cudaStreamWaitEvent");
  } else {
    waitPeer(r, r.stream, value);
  }
  if (shape == "kernel") spin<<<64, 256, 0, r.stream>>>(r.scratch, 64 * 256);
}

void enqueueRounds(const Rank& r, const std::string& shape) {
  for (int i = 1; i <= r.rounds; ++i) {
    if (r.rank == 0) {
      writeMine(r, i);
      awaitPeer(r, shape, i);
    } else {
      awaitPeer(r, shape, i);
      writeMine(r, i);
    }
  }
}

double secondsOf(const std::chrono::steady_clock::time_point& start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

// Microseconds per round: eager, then replayed.
void measure(Rank& r, const std::string& shape) {
  enqueueRounds(r, shape);  // warm-up
  check(cudaStreamSynchronize(r.stream), "cudaStreamSynchronize");
  auto start = std::chrono::steady_clock::now();
  for (int rep = 0; rep < kReplays; ++rep) enqueueRounds(r, shape);
  check(cudaStreamSynchronize(r.stream), "cudaStreamSynchronize");
  const double eager = secondsOf(start) / (kReplays * r.rounds) * 1e6;

  cudaGraph_t graph;
  cudaGraphExec_t exec;
  check(cudaStreamBeginCapture(r.stream, cudaStreamCaptureModeThreadLocal),
        "cudaStreamBeginCapture");
  enqueueRounds(r, shape);
  check(cudaStreamEndCapture(r.stream, &graph), "cudaStreamEndCapture");
  check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  check(cudaGraphLaunch(exec, r.stream), "cudaGraphLaunch");  // warm-up
  check(cudaStreamSynchronize(r.stream), "cudaStreamSynchronize");
  start = std::chrono::steady_clock::now();
  for (int rep = 0; rep < kReplays; ++rep)
    check(cudaGraphLaunch(exec, r.stream), "cudaGraphLaunch");
  check(cudaStreamSynchronize(r.stream), "cudaStreamSynchronize");
  const double replay = secondsOf(start) / (kReplays * r.rounds) * 1e6;
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  if (r.rank == 0)
    std::printf(
        "%-7s %2d rounds per graph: eager %8.2f us per round, replay "
        "%8.2f us per round (%.2fx eager)\n",
        shape.c_str(), r.rounds, eager, replay, eager / replay);
  std::fflush(stdout);
}

void runRank(int rank, int rounds, char* words) {
  check(cudaSetDevice(0), "cudaSetDevice");
  // Threads of one process share the registration: the second finds it.
  const cudaError_t registered =
      cudaHostRegister(words, 4096, cudaHostRegisterPortable);
  if (registered == cudaErrorHostMemoryAlreadyRegistered)
    cudaGetLastError();
  else
    check(registered, "cudaHostRegister");
  Rank r{rank, rounds};
  void* device = nullptr;
  check(cudaHostGetDevicePointer(&device, words, 0),
        "cudaHostGetDevicePointer");
  const auto base = reinterpret_cast<CUdeviceptr>(device);
  r.mine = base + rank * kWordStride;
  r.peers = base + (1 - rank) * kWordStride;
  check(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking),
        "cudaStreamCreate");
  check(cudaStreamCreateWithFlags(&r.side, cudaStreamNonBlocking),
        "cudaStreamCreate");
  check(cudaEventCreateWithFlags(&r.forkAt, cudaEventDisableTiming),
        "cudaEventCreate");
  check(cudaEventCreateWithFlags(&r.joinAt, cudaEventDisableTiming),
        "cudaEventCreate");
  check(cudaMalloc(&r.scratch, 64 * 256 * sizeof(float)), "cudaMalloc");
  // Loaded now: CUDA loads a module at its kernel's first launch, and that
  // load can wait for a stream that waits for the other rank (a deadlock
  // between threads of one process).
  spin<<<64, 256, 0, r.stream>>>(r.scratch, 64 * 256);
  check(cudaStreamSynchronize(r.stream), "cudaStreamSynchronize");
  for (const char* shape : {"plain", "forked", "kernel"}) measure(r, shape);
  check(cudaStreamSynchronize(r.stream), "cudaStreamSynchronize");
}

}  // namespace

int main(int argc, char** argv) {
  bool threads = false;
  int rounds = 20;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--threads") == 0)
      threads = true;
    else
      rounds = std::atoi(argv[i]);
  }
  if (rounds < 2) {
    std::fprintf(stderr, "rounds per graph must be at least 2\n");
    return 2;
  }
  // Shared before any CUDA call, so that both processes see the words.
  auto* words = static_cast<char*>(mmap(nullptr, 4096, PROT_READ | PROT_WRITE,
                                        MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  if (words == MAP_FAILED) return 2;
  std::memset(words, 0, 4096);
  std::printf("%s, 1 GPU\n",
              threads ? "2 threads of one process" : "2 processes");
  std::fflush(stdout);
  if (threads) {
    std::thread other(runRank, 1, rounds, words);
    runRank(0, rounds, words);
    other.join();
    return 0;
  }
  const pid_t child = fork();
  if (child < 0) return 2;
  runRank(child == 0 ? 1 : 0, rounds, words);
  if (child == 0) return 0;
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 2;
}
