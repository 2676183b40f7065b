// What HetCCL's pass-through adds to a small collective, measured inside
// one process per rank so that process placement, CPU clocks and NCCL's
// per-process setup are the same for both sides: each rank holds a HetCCL
// communicator (passed through to NVIDIA's NCCL) and a communicator made
// with NVIDIA's NCCL directly, on the same GPU and stream, and runs the
// same launches on each in alternating rounds. For every collective it
// prints the median over the rounds of
//   time      per launch, back to back (what nccl-tests reports),
//   enqueue   host time inside the launch calls, and
//   blocking  per launch with a stream synchronisation after each.
//
// Usage: passthrough_overhead <NVIDIA libnccl.so.2> [bytes per rank, 1024]
//        [rounds, 21] [launches per round, 400]      (needs 2 GPUs)
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "nccl.h"

namespace {

constexpr int kRanks = 2;

void die(const char* what, const char* detail) {
  std::printf("FAIL %s: %s\n", what, detail);
  std::exit(1);
}

void cudaOk(cudaError_t status, const char* what) {
  if (status != cudaSuccess) die(what, cudaGetErrorString(status));
}

void ncclOk(ncclResult_t result, const char* what) {
  if (result != ncclSuccess) die(what, ncclGetLastError(nullptr));
}

// The collectives of one library, both HetCCL's (linked) and NVIDIA's
// (loaded), reached the same way.
struct Library {
  decltype(&ncclAllReduce) allReduce;
  decltype(&ncclAllGather) allGather;
  decltype(&ncclReduceScatter) reduceScatter;
  decltype(&ncclBroadcast) broadcast;
  decltype(&ncclAlltoAll) alltoAll;
};

Library hetcclLibrary() {
  return {ncclAllReduce, ncclAllGather, ncclReduceScatter, ncclBroadcast,
          ncclAlltoAll};
}

// The library's own handle closes when the process exits: NCCL's
// communicators live until then.
struct NvidiaNccl {
  Library library;
  decltype(&ncclGetUniqueId) getUniqueId;
  decltype(&ncclCommInitRank) commInitRank;
};

template <typename Function>
Function symbol(void* handle, const char* name) {
  void* address = dlsym(handle, name);
  if (address == nullptr) die("dlsym", name);
  return reinterpret_cast<Function>(address);
}

NvidiaNccl loadNvidiaNccl(const char* path) {
  // The flags HetCCL uses: the same handle, so the same library instance.
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (handle == nullptr) die("dlopen", dlerror());
  NvidiaNccl nccl;
  nccl.library = {
      symbol<decltype(&ncclAllReduce)>(handle, "ncclAllReduce"),
      symbol<decltype(&ncclAllGather)>(handle, "ncclAllGather"),
      symbol<decltype(&ncclReduceScatter)>(handle, "ncclReduceScatter"),
      symbol<decltype(&ncclBroadcast)>(handle, "ncclBroadcast"),
      symbol<decltype(&ncclAlltoAll)>(handle, "ncclAlltoAll")};
  nccl.getUniqueId =
      symbol<decltype(&ncclGetUniqueId)>(handle, "ncclGetUniqueId");
  nccl.commInitRank =
      symbol<decltype(&ncclCommInitRank)>(handle, "ncclCommInitRank");
  return nccl;
}

struct Buffers {
  void* send;
  void* recv;
  size_t count;  // floats per rank
};

struct Collective {
  const char* name;
  ncclResult_t (*launch)(const Library&, const Buffers&, ncclComm_t,
                         cudaStream_t);
};

const Collective kCollectives[] = {
    {"allreduce",
     [](const Library& l, const Buffers& b, ncclComm_t c, cudaStream_t s) {
       return l.allReduce(b.send, b.recv, b.count, ncclFloat32, ncclSum, c, s);
     }},
    {"allgather",
     [](const Library& l, const Buffers& b, ncclComm_t c, cudaStream_t s) {
       return l.allGather(b.send, b.recv, b.count, ncclFloat32, c, s);
     }},
    {"reducescatter",
     [](const Library& l, const Buffers& b, ncclComm_t c, cudaStream_t s) {
       return l.reduceScatter(b.send, b.recv, b.count, ncclFloat32, ncclSum, c,
                              s);
     }},
    {"broadcast",
     [](const Library& l, const Buffers& b, ncclComm_t c, cudaStream_t s) {
       return l.broadcast(b.send, b.recv, b.count, ncclFloat32, 0, c, s);
     }},
    {"alltoall",
     [](const Library& l, const Buffers& b, ncclComm_t c, cudaStream_t s) {
       return l.alltoAll(b.send, b.recv, b.count / kRanks, ncclFloat32, c, s);
     }},
};

using Clock = std::chrono::steady_clock;

double microseconds(Clock::time_point from, Clock::time_point to, int n) {
  return std::chrono::duration<double, std::micro>(to - from).count() / n;
}

// One side's times of one round, per launch.
struct Round {
  double time, enqueue, blocking;
};

Round runRound(const Collective& collective, const Library& library,
               ncclComm_t comm, const Buffers& buffers, cudaStream_t stream,
               int launches) {
  Round round;
  cudaOk(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  Clock::time_point start = Clock::now();
  for (int i = 0; i < launches; ++i)
    ncclOk(collective.launch(library, buffers, comm, stream), collective.name);
  Clock::time_point enqueued = Clock::now();
  cudaOk(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  round.time = microseconds(start, Clock::now(), launches);
  round.enqueue = microseconds(start, enqueued, launches);
  int blockingLaunches = std::max(1, launches / 4);
  start = Clock::now();
  for (int i = 0; i < blockingLaunches; ++i) {
    ncclOk(collective.launch(library, buffers, comm, stream), collective.name);
    cudaOk(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  }
  round.blocking = microseconds(start, Clock::now(), blockingLaunches);
  return round;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

struct Settings {
  size_t bytes = 1024;
  int rounds = 21;
  int launches = 400;
};

void runRank(int rank, const NvidiaNccl& nvidia, int idPipe[2],
             const Settings& settings) {
  cudaOk(cudaSetDevice(rank), "cudaSetDevice");
  ncclUniqueId id;
  ncclOk(ncclGetUniqueId(&id), "ncclGetUniqueId (HetCCL)");
  ncclComm_t hetccl = nullptr;
  ncclOk(ncclCommInitRank(&hetccl, kRanks, id, rank), "HetCCL init");

  // NVIDIA's own communicator: rank 0's id reaches rank 1 through the pipe.
  ncclUniqueId nvidiaId;
  if (rank == 0) {
    ncclOk(nvidia.getUniqueId(&nvidiaId), "ncclGetUniqueId (NVIDIA)");
    if (write(idPipe[1], &nvidiaId, sizeof(nvidiaId)) != sizeof(nvidiaId))
      die("write", "unique id");
  } else if (read(idPipe[0], &nvidiaId, sizeof(nvidiaId)) != sizeof(nvidiaId)) {
    die("read", "unique id");
  }
  ncclComm_t direct = nullptr;
  ncclOk(nvidia.commInitRank(&direct, kRanks, nvidiaId, rank), "NVIDIA init");

  Buffers buffers{nullptr, nullptr, std::max<size_t>(settings.bytes / 4, 2)};
  cudaOk(cudaMalloc(&buffers.send, kRanks * buffers.count * 4), "cudaMalloc");
  cudaOk(cudaMalloc(&buffers.recv, kRanks * buffers.count * 4), "cudaMalloc");
  cudaStream_t stream;
  cudaOk(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
         "cudaStreamCreate");
  const Library hetcclCalls = hetcclLibrary();

  if (rank == 0)
    std::printf("%-14s %8s | %8s %8s %7s | %8s %8s | %8s %8s %7s\n",
                "collective", "bytes", "direct", "HetCCL", "+us", "enq dir",
                "enq Het", "blk dir", "blk Het", "+us");
  for (const Collective& collective : kCollectives) {
    // Warm-up of both sides, then alternating rounds.
    runRound(collective, nvidia.library, direct, buffers, stream, 50);
    runRound(collective, hetcclCalls, hetccl, buffers, stream, 50);
    std::vector<double> time[2], enqueue[2], blocking[2];
    for (int r = 0; r < settings.rounds; ++r) {
      for (int turn = 0; turn < 2; ++turn) {
        int side = (r + turn) % 2;  // 0: direct, 1: HetCCL
        Round round = runRound(
            collective, side == 0 ? nvidia.library : hetcclCalls,
            side == 0 ? direct : hetccl, buffers, stream, settings.launches);
        time[side].push_back(round.time);
        enqueue[side].push_back(round.enqueue);
        blocking[side].push_back(round.blocking);
      }
    }
    if (rank != 0) continue;
    double t0 = median(time[0]), t1 = median(time[1]);
    double b0 = median(blocking[0]), b1 = median(blocking[1]);
    std::printf(
        "%-14s %8zu | %8.2f %8.2f %+7.2f | %8.2f %8.2f | %8.2f %8.2f %+7.2f\n",
        collective.name, settings.bytes, t0, t1, t1 - t0, median(enqueue[0]),
        median(enqueue[1]), b0, b1, b1 - b0);
  }
  ncclCommDestroy(hetccl);
  ncclCommDestroy(direct);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s <NVIDIA libnccl.so.2> [bytes per rank] [rounds] "
                 "[launches per round]\n",
                 argv[0]);
    return 2;
  }
  Settings settings;
  if (argc > 2) settings.bytes = std::strtoull(argv[2], nullptr, 10);
  if (argc > 3) settings.rounds = std::max(1, std::atoi(argv[3]));
  if (argc > 4) settings.launches = std::max(1, std::atoi(argv[4]));
  setvbuf(stdout, nullptr, _IOLBF, 0);
  // HetCCL passes its one-domain communicator through to the same library.
  setenv("HETCCL_NCCL_LIBRARY", argv[1], 1);
  if (getenv("HETCCL_COMM_ID") == nullptr)
    setenv("HETCCL_COMM_ID", "127.0.0.1:29733", 1);
  int idPipe[2];
  if (pipe(idPipe) != 0) die("pipe", "cannot create");
  std::printf(
      "times in us per launch, median of %d rounds of %d launches; "
      "direct = NVIDIA's NCCL called directly, HetCCL = through "
      "HetCCL's pass-through; enq = host time in the launch calls; "
      "blk = with a synchronisation after each launch\n",
      settings.rounds, settings.launches);
  pid_t children[kRanks];
  for (int rank = 0; rank < kRanks; ++rank) {
    children[rank] = fork();
    if (children[rank] == 0) {
      runRank(rank, loadNvidiaNccl(argv[1]), idPipe, settings);
      std::fflush(stdout);
      _exit(0);
    }
  }
  int failed = 0;
  for (pid_t child : children) {
    int status = 0;
    waitpid(child, &status, 0);
    failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  return failed ? 1 : 0;
}
