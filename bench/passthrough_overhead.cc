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
// Separate processes are no fair comparison at these sizes: NVIDIA's NCCL
// alone takes 6.5 us per small launch in one process and 10 us in the next
// on the same machine (tests/gpu/overhead_probe.sh shows it).
//
// Usage: passthrough_overhead <NVIDIA libnccl.so.2> [bytes per rank: N or
//        MIN:MAX (MIN, 2*MIN, ... MAX); 1024] [rounds, 21]
//        [launches per round, 400] [sides, both]             (needs 2 GPUs)
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
  decltype(&ncclCommDestroy) commDestroy;
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
  nccl.commDestroy =
      symbol<decltype(&ncclCommDestroy)>(handle, "ncclCommDestroy");
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

// Which communicators a rank makes. Besides the comparison (both), each
// side alone, and NVIDIA's after a HetCCL communicator came and went: they
// tell a cost of the pass-through from one of HetCCL's presence in the
// process.
enum class Sides { Both, Direct, Hetccl, DirectAfterHetccl };

struct Settings {
  size_t minBytes = 1024;  // per rank; doubled up to maxBytes
  size_t maxBytes = 1024;
  int rounds = 21;
  int launches = 400;
  Sides sides = Sides::Both;
};

Sides parseSides(const char* text) {
  const std::string name = text;
  if (name == "both") return Sides::Both;
  if (name == "direct") return Sides::Direct;
  if (name == "hetccl") return Sides::Hetccl;
  if (name == "direct-after-hetccl") return Sides::DirectAfterHetccl;
  die("sides", "expected both, direct, hetccl or direct-after-hetccl");
  return Sides::Both;
}

ncclComm_t makeHetcclComm(int rank) {
  ncclUniqueId id;
  ncclOk(ncclGetUniqueId(&id), "ncclGetUniqueId (HetCCL)");
  ncclComm_t comm = nullptr;
  ncclOk(ncclCommInitRank(&comm, kRanks, id, rank), "HetCCL init");
  return comm;
}

// NVIDIA's own communicator: rank 0's id reaches rank 1 through the pipe.
ncclComm_t makeDirectComm(int rank, const NvidiaNccl& nvidia, int idPipe[2]) {
  ncclUniqueId id;
  if (rank == 0) {
    ncclOk(nvidia.getUniqueId(&id), "ncclGetUniqueId (NVIDIA)");
    if (write(idPipe[1], &id, sizeof(id)) != sizeof(id))
      die("write", "unique id");
  } else if (read(idPipe[0], &id, sizeof(id)) != sizeof(id)) {
    die("read", "unique id");
  }
  ncclComm_t comm = nullptr;
  ncclOk(nvidia.commInitRank(&comm, kRanks, id, rank), "NVIDIA init");
  return comm;
}

// The threads of this process and the CPUs its main thread may run on.
std::string processFacts() {
  cpu_set_t cpus;
  int allowed =
      sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ? CPU_COUNT(&cpus) : -1;
  std::string threads = "?";
  if (FILE* status = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof(line), status))
      if (std::strncmp(line, "Threads:", 8) == 0)
        threads = std::to_string(std::atoi(line + 8));
    std::fclose(status);
  }
  return threads + " threads, " + std::to_string(allowed) + " CPUs allowed";
}

std::string formatColumn(const std::vector<double>& values) {
  if (values.empty()) return "       -";
  char text[32];
  std::snprintf(text, sizeof(text), "%8.2f", median(values));
  return text;
}

std::string formatDifference(const std::vector<double>& direct,
                             const std::vector<double>& hetccl) {
  if (direct.empty() || hetccl.empty()) return "      -";
  char text[32];
  std::snprintf(text, sizeof(text), "%+7.2f", median(hetccl) - median(direct));
  return text;
}

// One size's medians; ratio: direct time / HetCCL time (the ratio of the
// bus bandwidths).
void printRow(const char* collective, size_t bytes,
              const std::vector<double> (&time)[2],
              const std::vector<double> (&enqueue)[2],
              const std::vector<double> (&blocking)[2]) {
  char ratio[16] = "     -";
  if (!time[0].empty() && !time[1].empty())
    std::snprintf(ratio, sizeof(ratio), "%6.3f",
                  median(time[0]) / median(time[1]));
  std::printf(
      "%-14s %8zu | %s %s %s %s | %s %s | %s %s %s\n", collective, bytes,
      formatColumn(time[0]).c_str(), formatColumn(time[1]).c_str(),
      formatDifference(time[0], time[1]).c_str(), ratio,
      formatColumn(enqueue[0]).c_str(), formatColumn(enqueue[1]).c_str(),
      formatColumn(blocking[0]).c_str(), formatColumn(blocking[1]).c_str(),
      formatDifference(blocking[0], blocking[1]).c_str());
}

void runRank(int rank, const NvidiaNccl& nvidia, int idPipe[2],
             const Settings& settings) {
  cudaOk(cudaSetDevice(rank), "cudaSetDevice");
  ncclComm_t comms[2] = {nullptr, nullptr};  // 0: direct, 1: HetCCL
  if (settings.sides != Sides::Direct) comms[1] = makeHetcclComm(rank);
  if (settings.sides == Sides::DirectAfterHetccl) {
    ncclOk(ncclCommDestroy(comms[1]), "ncclCommDestroy (HetCCL)");
    comms[1] = nullptr;
  }
  if (settings.sides != Sides::Hetccl)
    comms[0] = makeDirectComm(rank, nvidia, idPipe);
  const Library libraries[2] = {nvidia.library, hetcclLibrary()};

  Buffers buffers{nullptr, nullptr, 0};
  const size_t maxCount = std::max<size_t>(settings.maxBytes / 4, 2);
  cudaOk(cudaMalloc(&buffers.send, kRanks * maxCount * 4), "cudaMalloc");
  cudaOk(cudaMalloc(&buffers.recv, kRanks * maxCount * 4), "cudaMalloc");
  cudaStream_t stream;
  cudaOk(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
         "cudaStreamCreate");

  if (rank == 0) {
    std::printf("rank 0: %s\n", processFacts().c_str());
    std::printf("%-14s %8s | %8s %8s %7s %6s | %8s %8s | %8s %8s %7s\n",
                "collective", "bytes", "direct", "HetCCL", "+us", "ratio",
                "enq dir", "enq Het", "blk dir", "blk Het", "+us");
  }
  for (const Collective& collective : kCollectives) {
    for (size_t bytes = settings.minBytes; bytes <= settings.maxBytes;
         bytes *= 2) {
      buffers.count = std::max<size_t>(bytes / 4, 2);
      // Warm-up of each side, then alternating rounds.
      for (int side = 0; side < 2; ++side)
        if (comms[side] != nullptr)
          runRound(collective, libraries[side], comms[side], buffers, stream,
                   50);
      std::vector<double> time[2], enqueue[2], blocking[2];
      for (int r = 0; r < settings.rounds; ++r) {
        for (int turn = 0; turn < 2; ++turn) {
          int side = (r + turn) % 2;
          if (comms[side] == nullptr) continue;
          Round round = runRound(collective, libraries[side], comms[side],
                                 buffers, stream, settings.launches);
          time[side].push_back(round.time);
          enqueue[side].push_back(round.enqueue);
          blocking[side].push_back(round.blocking);
        }
      }
      if (rank == 0) printRow(collective.name, bytes, time, enqueue, blocking);
    }
  }
  if (comms[0] != nullptr) nvidia.commDestroy(comms[0]);
  if (comms[1] != nullptr) ncclCommDestroy(comms[1]);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(
        stderr,
        "usage: %s <NVIDIA libnccl.so.2> [bytes per rank: N or MIN:MAX] "
        "[rounds] "
        "[launches per round] "
        "[both|direct|hetccl|direct-after-hetccl]\n",
        argv[0]);
    return 2;
  }
  Settings settings;
  if (argc > 2) {
    // N, or MIN:MAX for MIN, 2*MIN, ... up to MAX.
    char* end = nullptr;
    settings.minBytes = std::max<size_t>(std::strtoull(argv[2], &end, 10), 4);
    settings.maxBytes =
        *end == ':' ? std::strtoull(end + 1, nullptr, 10) : settings.minBytes;
  }
  if (argc > 3) settings.rounds = std::max(1, std::atoi(argv[3]));
  if (argc > 4) settings.launches = std::max(1, std::atoi(argv[4]));
  if (argc > 5) settings.sides = parseSides(argv[5]);
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
      "HetCCL's pass-through; ratio = direct time / HetCCL time (= HetCCL "
      "busbw / direct busbw); enq = host time in the launch calls; "
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
