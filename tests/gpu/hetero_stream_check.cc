// GPU checks of heterogeneous communicators that need real CUDA streams:
// two GPU ranks (processes) forced into two domains. For collectives
// (all-reduce, all-gather, reduce), the NCCL call must return while the
// stream is still held back (it only enqueues), and the result must be
// right once the stream runs.
//
// CUDA graphs: collectives and a send/receive exchange captured in one
// graph must replay right 100 times with new inputs each time, between
// eager launches of the same communicator; a replayed 8 KB all-reduce is
// timed against eager launches in alternating rounds (HETERO_STREAM_ROUNDS,
// default 3; with HETERO_STREAM_SWEEP=1 also all-reduce,
// all-gather and reduce-scatter from 8 B to 1 MiB; HETERO_STREAM_PER_GRAPH
// sets how many a graph holds, default 20). Over shm the
// launches are stream-driven; over tcp (HETCCL_TRANSPORT=tcp) every launch goes
// through the staging proxy, as does, over shm too, a reduction by a scalar in
// device memory, which is captured and replayed with a changing scalar.
//
// Usage: hetero_stream_check <libhetccl-cuda.so> [--threads]
//        (rank r on GPU r % count; one GPU is enough). The ranks are two
//        processes, or with --threads two threads of one: then both share
//        one CUDA context, and on one GPU their work runs side by side
//        instead of in turns (two processes time-share a GPU).
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cuda_ok.h"
#include "hetccl.h"
#include "nccl.h"
#include "runtime/device/device_module.h"

namespace {

std::atomic<int> failures{0};

// With the ranks as threads of one process on one GPU, a call that waits
// for the whole device (cudaFree; cudaMalloc at times) must not run while
// the other rank's work waits for this rank's: the ranks meet around such
// calls. Processes do not wait for each other's work that way.
class Rendezvous {
 public:
  void enable() { enabled_ = true; }
  void meet() {
    if (!enabled_) return;
    std::unique_lock<std::mutex> lock(mutex_);
    const int generation = generation_;
    if (++arrived_ == 2) {
      arrived_ = 0;
      ++generation_;
      met_.notify_all();
      return;
    }
    met_.wait(lock, [&] { return generation_ != generation; });
  }

 private:
  bool enabled_ = false;
  std::mutex mutex_;
  std::condition_variable met_;
  int arrived_ = 0;
  int generation_ = 0;
};
Rendezvous ranks;

void check(bool ok, int rank, const char* what) {
  std::printf("%s rank %d: %s\n", ok ? "PASS" : "FAIL", rank, what);
  if (!ok) ++failures;
}

const hetcclDeviceModuleTable* loadModule(const char* path) {
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    std::printf("FAIL cannot load %s: %s\n", path, dlerror());
    std::exit(1);
  }
  auto entry = reinterpret_cast<hetcclDeviceModuleEntry>(
      dlsym(handle, HETCCL_DEVICE_MODULE_ENTRY));
  return entry();
}

// Holds `stream` back until release(): a stream wait on a host word.
struct Gate {
  const hetcclDeviceModuleTable* module;
  uint64_t* word = nullptr;

  void close(cudaStream_t stream) {
    if (word == nullptr)
      CUDA_OK(cudaHostAlloc(reinterpret_cast<void**>(&word), sizeof(*word),
                            cudaHostAllocMapped | cudaHostAllocPortable));
    __atomic_store_n(word, 0, __ATOMIC_RELEASE);
    if (module->waitValue64(stream, word, 1) != 0) {
      std::printf("FAIL waitValue64\n");
      std::exit(1);
    }
  }
  void release() { __atomic_store_n(word, 1, __ATOMIC_RELEASE); }
};

bool streamBusy(cudaStream_t stream) {
  return cudaStreamQuery(stream) == cudaErrorNotReady;
}

// The op must not block while the gate holds the stream, nor finish.
template <typename Launch>
void checkEnqueueOnly(int rank, Gate& gate, cudaStream_t stream,
                      const char* name, Launch launch) {
  gate.close(stream);
  std::printf("rank %d: %s: stream held back, launching\n", rank, name);
  auto start = std::chrono::steady_clock::now();
  ncclResult_t result = launch();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  bool busy = streamBusy(stream);
  gate.release();
  std::string what = std::string(name) + " returns before the GPU work (" +
                     std::to_string(seconds * 1e6) + " us, stream busy)";
  check(result == ncclSuccess && busy, rank, what.c_str());
  CUDA_OK(cudaStreamSynchronize(stream));
}

// Device buffers of one captured step: an all-reduce, an all-gather, a
// broadcast from rank 1 and an exchange with the other rank.
struct GraphBuffers {
  static constexpr size_t kCount = 2048;  // 8 KB of floats
  float* input;
  float* reduced;
  float* gathered;  // 2 * kCount
  float* broadcast;
  float* received;
  GraphBuffers() {
    for (float** buffer : {&input, &reduced, &broadcast, &received})
      CUDA_OK(cudaMalloc(buffer, kCount * sizeof(float)));
    CUDA_OK(cudaMalloc(&gathered, 2 * kCount * sizeof(float)));
  }
  ~GraphBuffers() {
    for (float* buffer : {input, reduced, gathered, broadcast, received})
      cudaFree(buffer);
  }
};

ncclResult_t enqueueStep(const GraphBuffers& b, int rank, ncclComm_t comm,
                         cudaStream_t stream) {
  const size_t n = GraphBuffers::kCount;
  ncclResult_t r =
      ncclAllReduce(b.input, b.reduced, n, ncclFloat32, ncclSum, comm, stream);
  if (r == ncclSuccess)
    r = ncclAllGather(b.input, b.gathered, n, ncclFloat32, comm, stream);
  if (r == ncclSuccess)
    r = ncclBroadcast(b.input, b.broadcast, n, ncclFloat32, 1, comm, stream);
  if (r != ncclSuccess) return r;
  ncclGroupStart();
  ncclSend(b.input, n, ncclFloat32, 1 - rank, comm, stream);
  ncclRecv(b.received, n, ncclFloat32, 1 - rank, comm, stream);
  return ncclGroupEnd();
}

// Every element of the step's outputs when rank r's input is (r + 1) * v.
bool stepRight(const GraphBuffers& b, int rank, float v) {
  const size_t n = GraphBuffers::kCount;
  std::vector<float> out(5 * n);
  CUDA_OK(cudaMemcpy(out.data(), b.reduced, n * 4, cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(out.data() + n, b.gathered, 2 * n * 4,
                     cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(out.data() + 3 * n, b.broadcast, n * 4,
                     cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(out.data() + 4 * n, b.received, n * 4,
                     cudaMemcpyDeviceToHost));
  const float want[5] = {3 * v, v, 2 * v, 2 * v, (2 - rank) * v};
  for (size_t i = 0; i < 5 * n; ++i)
    if (out[i] != want[i / n]) return false;
  return true;
}

void setInput(const GraphBuffers& b, int rank, float v, cudaStream_t stream) {
  std::vector<float> host(GraphBuffers::kCount, (rank + 1) * v);
  CUDA_OK(cudaMemcpyAsync(b.input, host.data(), host.size() * 4,
                          cudaMemcpyHostToDevice, stream));
  CUDA_OK(cudaStreamSynchronize(stream));
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

// How many nodes of each kind `graph` holds per op: "kernel 2.0, memcpy
// 2.0, ...", so that a replay's time can be read against the work it runs.
// Through the driver: the runtime's cudaGraphNodeGetType fails on the
// stream memory operations' nodes.
std::string nodeKinds(cudaGraph_t graph, size_t nodes, int perGraph) {
  using GetType = int (*)(cudaGraphNode_t, int*);
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  auto getType =
      driver ? reinterpret_cast<GetType>(dlsym(driver, "cuGraphNodeGetType"))
             : nullptr;
  if (getType == nullptr) return "(cuGraphNodeGetType not found)";
  std::vector<cudaGraphNode_t> all(nodes);
  CUDA_OK(cudaGraphGetNodes(graph, all.data(), &nodes));
  std::map<int, int> counts;
  for (cudaGraphNode_t node : all) {
    int type = -1;
    if (getType(node, &type) != 0) type = -1;
    ++counts[type];
  }
  dlclose(driver);
  // CUgraphNodeType's values (cuda.h).
  const std::map<int, const char*> names = {
      {0, "kernel"},       {1, "memcpy"},     {2, "memset"},
      {3, "host"},         {5, "empty"},      {6, "event wait"},
      {7, "event record"}, {12, "memory op"}, {-1, "unknown"}};
  std::string text;
  for (const auto& [type, count] : counts) {
    auto name = names.find(type);
    char share[32];
    std::snprintf(share, sizeof(share), " %.1f",
                  static_cast<double>(count) / perGraph);
    text += (text.empty() ? "" : ", ") +
            (name != names.end() ? std::string(name->second)
                                 : "type " + std::to_string(type)) +
            share;
  }
  return text;
}

// Collectives per captured graph: HETERO_STREAM_PER_GRAPH (default 20), so
// that what a replay's start costs shows against what each op costs.
int opsPerGraph() {
  const char* value = std::getenv("HETERO_STREAM_PER_GRAPH");
  const int perGraph = value ? std::atoi(value) : 20;
  return perGraph > 0 && 1000 % perGraph == 0 ? perGraph : 20;
}

// Rounds of eager launches and replays, taken in turn
// (HETERO_STREAM_ROUNDS, default 3): the machine's load drifts over a run,
// and one eager block timed before one replay block puts that drift into
// their ratio.
int timingRounds() {
  const char* value = std::getenv("HETERO_STREAM_ROUNDS");
  const int rounds = value ? std::atoi(value) : 3;
  return rounds > 0 ? rounds : 3;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

// Per-op microseconds of `enqueue` (one collective on `stream`, `bytes`
// its larger buffer): eager launches, and replays of a graph that holds
// opsPerGraph() of them, in timingRounds() alternating rounds of 1000 ops
// each. Printed as "rank R: <what> of B bytes: ...", a line per round and
// one of the medians.
void timeGraphReplays(int rank, cudaStream_t stream, const char* what,
                      size_t bytes, const std::function<void()>& enqueue) {
  const int ops = 1000, perGraph = opsPerGraph(), rounds = timingRounds();
  auto eager = [&] {
    for (int i = 0; i < ops; ++i) enqueue();
  };
  eager();  // warm-up, before the capture as a program would run it
  CUDA_OK(cudaStreamSynchronize(stream));
  cudaGraph_t graph;
  CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed));
  for (int i = 0; i < perGraph; ++i) enqueue();
  CUDA_OK(cudaStreamEndCapture(stream, &graph));
  size_t nodes = 0;
  CUDA_OK(cudaGraphGetNodes(graph, nullptr, &nodes));
  std::printf("rank %d: %s of %zu bytes: graph nodes per op by kind: %s\n",
              rank, what, bytes, nodeKinds(graph, nodes, perGraph).c_str());
  cudaGraphExec_t exec;
  CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  auto replay = [&] {
    for (int i = 0; i < ops / perGraph; ++i)
      CUDA_OK(cudaGraphLaunch(exec, stream));
  };
  auto usPerOp = [&](const std::function<void()>& block) {
    CUDA_OK(cudaStreamSynchronize(stream));
    const auto start = std::chrono::steady_clock::now();
    block();
    CUDA_OK(cudaStreamSynchronize(stream));
    return secondsSince(start) * 1e6 / ops;
  };
  usPerOp(replay);  // warm-up
  std::vector<double> eagerUs, graphUs, speedUps;
  for (int round = 1; round <= rounds; ++round) {
    eagerUs.push_back(usPerOp(eager));
    graphUs.push_back(usPerOp(replay));
    speedUps.push_back(eagerUs.back() / graphUs.back());
    std::printf(
        "rank %d: %s of %zu bytes, round %d: eager %.2f us per op, graph "
        "replay %.2f: %.2fx\n",
        rank, what, bytes, round, eagerUs.back(), graphUs.back(),
        speedUps.back());
  }
  std::printf(
      "rank %d: %s of %zu bytes: eager %.2f us per op, graph replay %.2f us "
      "per op (%d per graph, %.1f graph nodes per op; medians of %d rounds, "
      "rounds %.2f-%.2fx): %.2fx\n",
      rank, what, bytes, median(eagerUs), median(graphUs), perGraph,
      static_cast<double>(nodes) / perGraph, rounds,
      *std::min_element(speedUps.begin(), speedUps.end()),
      *std::max_element(speedUps.begin(), speedUps.end()), median(speedUps));
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

// With HETERO_STREAM_SWEEP=1: all-reduce, all-gather and reduce-scatter of
// floats from 8 bytes to 1 MiB (the larger buffer), in steps of 8x up to
// 32 KiB and of 2x from there (around the low-latency threshold).
void sweepCollectives(int rank, ncclComm_t comm, cudaStream_t stream) {
  const char* sweep = std::getenv("HETERO_STREAM_SWEEP");
  if (sweep == nullptr || std::strcmp(sweep, "1") != 0) return;
  const size_t most = 1 << 20;
  float *input, *output;
  CUDA_OK(cudaMalloc(&input, most));
  CUDA_OK(cudaMalloc(&output, most));
  CUDA_OK(cudaMemset(input, 0, most));
  ranks.meet();
  for (size_t bytes = 8; bytes <= most; bytes *= bytes < 32768 ? 8 : 2) {
    const size_t n = bytes / sizeof(float);
    timeGraphReplays(rank, stream, "all-reduce", bytes, [&] {
      ncclAllReduce(input, output, n, ncclFloat32, ncclSum, comm, stream);
    });
    timeGraphReplays(rank, stream, "all-gather", bytes, [&] {
      ncclAllGather(input, output, n / 2, ncclFloat32, comm, stream);
    });
    timeGraphReplays(rank, stream, "reduce-scatter", bytes, [&] {
      ncclReduceScatter(input, output, n / 2, ncclFloat32, ncclSum, comm,
                        stream);
    });
  }
  ranks.meet();
  cudaFree(input);
  cudaFree(output);
}

// Captures one step, then replays it with new inputs, an eager step after
// every tenth replay.
void checkGraphs(int rank, ncclComm_t comm, cudaStream_t stream) {
  GraphBuffers b;
  ranks.meet();
  setInput(b, rank, 1.0f, stream);
  cudaGraph_t graph = nullptr;
  CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed));
  const ncclResult_t captured = enqueueStep(b, rank, comm, stream);
  CUDA_OK(cudaStreamEndCapture(stream, &graph));
  check(captured == ncclSuccess, rank,
        ("collectives and send/receive captured in a CUDA graph: " +
         std::string(captured == ncclSuccess ? "" : ncclGetLastError(comm)))
            .c_str());
  if (captured != ncclSuccess) return;
  cudaGraphExec_t exec;
  CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  int wrong = 0, eagerWrong = 0;
  for (int i = 1; i <= 100; ++i) {
    setInput(b, rank, float(i), stream);
    CUDA_OK(cudaGraphLaunch(exec, stream));
    CUDA_OK(cudaStreamSynchronize(stream));
    wrong += !stepRight(b, rank, float(i));
    if (i % 10 == 0) {
      setInput(b, rank, float(-i), stream);
      enqueueStep(b, rank, comm, stream);
      CUDA_OK(cudaStreamSynchronize(stream));
      eagerWrong += !stepRight(b, rank, float(-i));
    }
  }
  check(wrong == 0, rank,
        ("100 replays with new inputs right (" + std::to_string(wrong) +
         " wrong)")
            .c_str());
  check(eagerWrong == 0, rank, "eager launches between the replays right");
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  timeGraphReplays(rank, stream, "all-reduce",
                   GraphBuffers::kCount * sizeof(float), [&] {
                     ncclAllReduce(b.input, b.reduced, GraphBuffers::kCount,
                                   ncclFloat32, ncclSum, comm, stream);
                   });
  ranks.meet();  // before b frees its buffers
}

// An all-reduce scaled by a scalar in device memory, which always takes
// the staging proxy: captured once, replayed with a new scalar each time;
// then an eager all-reduce.
void checkStagedCapture(int rank, ncclComm_t comm, cudaStream_t stream,
                        float* send, float* recv, size_t count) {
  float* scalar;
  CUDA_OK(cudaMalloc(&scalar, sizeof(float)));
  ranks.meet();
  ncclRedOp_t times;
  ncclRedOpCreatePreMulSum(&times, scalar, ncclFloat32, ncclScalarDevice, comm);
  CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed));
  ncclResult_t captured =
      ncclAllReduce(send, recv, count, ncclFloat32, times, comm, stream);
  std::string message = ncclGetLastError(comm);
  cudaGraph_t graph = nullptr;
  CUDA_OK(cudaStreamEndCapture(stream, &graph));
  check(captured == ncclSuccess, rank,
        ("a staged all-reduce (scalar in device memory) captured: " +
         (captured == ncclSuccess ? std::string() : message))
            .c_str());
  int wrong = 0;
  if (captured == ncclSuccess) {
    cudaGraphExec_t exec;
    CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    // Pinned: a copy from pageable memory can block the calling thread
    // until the stream gets there, and with the ranks as threads of one
    // process, one rank's blocked copy could keep the other from
    // launching its replay.
    float* host;  // the factor, then the first and last results
    CUDA_OK(cudaMallocHost(&host, 3 * sizeof(float)));
    ranks.meet();
    for (int i = 1; i <= 10; ++i) {
      host[0] = float(i);
      CUDA_OK(cudaMemcpyAsync(scalar, host, sizeof(float),
                              cudaMemcpyHostToDevice, stream));
      CUDA_OK(cudaGraphLaunch(exec, stream));
      CUDA_OK(cudaMemcpyAsync(host + 1, recv, sizeof(float),
                              cudaMemcpyDeviceToHost, stream));
      CUDA_OK(cudaMemcpyAsync(host + 2, recv + count - 1, sizeof(float),
                              cudaMemcpyDeviceToHost, stream));
      CUDA_OK(cudaStreamSynchronize(stream));
      wrong += host[1] != 3.0f * i || host[2] != 3.0f * i;
    }
    ranks.meet();
    CUDA_OK(cudaFreeHost(host));
    cudaGraphExecDestroy(exec);
  }
  if (graph != nullptr) cudaGraphDestroy(graph);
  check(captured == ncclSuccess && wrong == 0, rank,
        ("10 replays of the staged all-reduce with a new scalar right (" +
         std::to_string(wrong) + " wrong)")
            .c_str());
  ncclResult_t after =
      ncclAllReduce(send, recv, count, ncclFloat32, ncclMax, comm, stream);
  CUDA_OK(cudaStreamSynchronize(stream));
  float first = 0;
  CUDA_OK(cudaMemcpy(&first, recv, sizeof(float), cudaMemcpyDeviceToHost));
  check(after == ncclSuccess && first == 2.0f, rank,
        "an eager all-reduce after the replays right");
  ncclRedOpDestroy(times, comm);
  ranks.meet();
  cudaFree(scalar);
}

void runRank(int rank, const hetcclDeviceModuleTable* module) {
  // Rank r on GPU r % count: with one GPU both ranks share it (HetCCL runs
  // two ranks on one GPU; NVIDIA's NCCL would not, but each domain here has
  // one rank, so NCCL has no part in it).
  int gpus = 0;
  CUDA_OK(cudaGetDeviceCount(&gpus));
  const int device = rank % gpus;
  std::printf("rank %d: starting on GPU %d of %d\n", rank, device, gpus);
  CUDA_OK(cudaSetDevice(device));
  ncclUniqueId id;
  ncclGetUniqueId(&id);  // HETCCL_COMM_ID fixes the root: same id everywhere
  ncclComm_t comm;
  if (ncclCommInitRank(&comm, 2, id, rank) != ncclSuccess) {
    std::printf("FAIL rank %d: init: %s\n", rank, ncclGetLastError(nullptr));
    std::exit(1);
  }
  std::printf("rank %d: communicator ready\n", rank);
  int ndomains = 0, domain = -1;
  hetcclCommDomains(comm, &ndomains, &domain);
  check(ndomains == 2, rank, "two GPU ranks form two domains");

  const size_t count = (64u << 20) / sizeof(float) + 3;  // odd, many chunks
  float *send, *recv;
  CUDA_OK(cudaMalloc(&send, count * sizeof(float)));
  CUDA_OK(cudaMalloc(&recv, 2 * count * sizeof(float)));
  std::vector<float> host(count, float(rank + 1));
  CUDA_OK(cudaMemcpy(send, host.data(), count * sizeof(float),
                     cudaMemcpyHostToDevice));
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  Gate gate{module};

  checkEnqueueOnly(rank, gate, stream, "all-reduce", [&] {
    return ncclAllReduce(send, recv, count, ncclFloat32, ncclSum, comm, stream);
  });
  std::vector<float> result(2 * count);
  CUDA_OK(cudaMemcpy(result.data(), recv, count * sizeof(float),
                     cudaMemcpyDeviceToHost));
  bool right = true;
  for (size_t i = 0; i < count; ++i) right &= result[i] == 3.0f;
  check(right, rank, "all-reduce result");

  checkEnqueueOnly(rank, gate, stream, "all-gather", [&] {
    return ncclAllGather(send, recv, count, ncclFloat32, comm, stream);
  });
  CUDA_OK(cudaMemcpy(result.data(), recv, 2 * count * sizeof(float),
                     cudaMemcpyDeviceToHost));
  right = true;
  for (size_t i = 0; i < 2 * count; ++i)
    right &= result[i] == (i < count ? 1.0f : 2.0f);
  check(right, rank, "all-gather result");

  checkEnqueueOnly(rank, gate, stream, "reduce", [&] {
    return ncclReduce(send, recv, count, ncclFloat32, ncclSum, 0, comm, stream);
  });
  if (rank == 0) {
    CUDA_OK(cudaMemcpy(result.data(), recv, count * sizeof(float),
                       cudaMemcpyDeviceToHost));
    right = true;
    for (size_t i = 0; i < count; ++i) right &= result[i] == 3.0f;
    check(right, rank, "reduce result at the root");
  }

  checkGraphs(rank, comm, stream);
  checkStagedCapture(rank, comm, stream, send, recv, count);
  sweepCollectives(rank, comm, stream);

  ranks.meet();
  ncclCommDestroy(comm);
  cudaFree(send);
  cudaFree(recv);
  cudaStreamDestroy(stream);
}

}  // namespace

int main(int argc, char** argv) {
  const bool threads = argc == 3 && std::strcmp(argv[2], "--threads") == 0;
  if (argc != 2 && !threads) {
    std::fprintf(stderr, "usage: %s <libhetccl-cuda.so> [--threads]\n",
                 argv[0]);
    return 2;
  }
  // Line by line: a run cut short by a timeout still shows how far it got.
  setvbuf(stdout, nullptr, _IOLBF, 0);
  setenv("HETCCL_DOMAINS", "split:2", 1);
  if (getenv("HETCCL_COMM_ID") == nullptr)
    setenv("HETCCL_COMM_ID", "127.0.0.1:29731", 1);
  std::fflush(stdout);
  int failed = 0;
  if (threads) {
    ranks.enable();
    const hetcclDeviceModuleTable* module = loadModule(argv[1]);
    std::vector<std::thread> ranks;
    for (int rank = 0; rank < 2; ++rank)
      ranks.emplace_back(runRank, rank, module);
    for (std::thread& rank : ranks) rank.join();
    failed = failures.load();
  } else {
    pid_t children[2];
    for (int rank = 0; rank < 2; ++rank) {
      children[rank] = fork();
      if (children[rank] == 0) {
        runRank(rank, loadModule(argv[1]));
        std::fflush(stdout);
        _exit(failures == 0 ? 0 : 1);
      }
    }
    for (pid_t child : children) {
      int status = 0;
      waitpid(child, &status, 0);
      failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
  }
  std::printf("%s hetero_stream_check%s\n", failed ? "FAIL" : "PASS",
              threads ? " (threads)" : "");
  return failed ? 1 : 0;
}
