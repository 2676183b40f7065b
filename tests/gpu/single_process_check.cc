// single_process_check: one process drives several GPUs, as NCCL documents
// it: from one thread (ncclCommInitAll, or with --grouped-init one
// ncclCommInitRank per device inside ncclGroupStart/ncclGroupEnd; then
// every collective issued for all communicators inside one group) or with
// one thread per device (ncclCommInitRank on a shared id, each thread its
// own collectives). Every collective (all-reduce, all-gather, reduce-scatter,
// broadcast, reduce) and a grouped send/receive ring, results checked
// element by element, and the current device checked after every call
// (NCCL leaves the caller's device current; programs depend on it).
//
// Usage: single_process_check [--threads | --grouped-init]
//                             [--devices 0,1,...] [--busbw BYTES]
//   The devices default to every visible one. Linked against libnccl.so.2
//   by its soname: HetCCL's from the build, NVIDIA's with LD_PRELOAD (the
//   same program against both). HETCCL_DOMAINS=split:N makes HetCCL's
//   ranks N domains, which also lets two ranks share one GPU
//   (--devices 0,0) with --threads or --grouped-init: ncclCommInitAll
//   refuses a device listed twice, in NCCL and in HetCCL alike.
// With --threads, --busbw BYTES then times all-reduces and send/receive
// rings of BYTES per rank (2 untimed, 5 timed, launched back to back) and
// prints rank 0's bus bandwidth: ranks sharing one GPU as threads share
// one CUDA context, where processes would take turns on the GPU.
// Prints one PASS or FAIL line per check; exits 1 on any failure.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cuda_ok.h"
#include "nccl.h"

namespace {

std::mutex printing;
int failures = 0;

void check(bool ok, const std::string& what) {
  std::lock_guard<std::mutex> lock(printing);
  std::printf("%s %s\n", ok ? "PASS" : "FAIL", what.c_str());
  if (!ok) ++failures;
}

#define NCCL_OK(call, comm)                                                 \
  do {                                                                      \
    ncclResult_t status_ = (call);                                          \
    if (status_ != ncclSuccess) {                                           \
      std::printf("FAIL %s: %s (%s)\n", #call, ncclGetErrorString(status_), \
                  ncclGetLastError(comm));                                  \
      std::exit(1);                                                         \
    }                                                                       \
  } while (0)

constexpr size_t kCount = (1u << 20) + 3;  // per rank: odd, several chunks

// One rank: its communicator, device, stream and buffers.
struct Rank {
  int index;
  int device;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  float* send = nullptr;
  float* recv = nullptr;      // room for nranks * kCount
  char* timedSend = nullptr;  // --busbw's buffers
  char* timedRecv = nullptr;
};

size_t busbwBytes = 0;  // --busbw

// Each rank sends `count` floats to the next and receives from the one
// before, in one group.
ncclResult_t sendReceiveRing(Rank& r, int n, const void* send, void* recv,
                             size_t count) {
  ncclGroupStart();
  ncclSend(send, count, ncclFloat32, (r.index + 1) % n, r.comm, r.stream);
  ncclRecv(recv, count, ncclFloat32, (r.index + n - 1) % n, r.comm, r.stream);
  return ncclGroupEnd();
}

// Rank 0's bus bandwidth (GB/s) of `launch` over busbwBytes, in which a
// launch moves `factor` times the bytes across the busiest link.
void timeLaunches(Rank& rank, const char* name, double factor,
                  const std::function<ncclResult_t()>& launch) {
  constexpr int kWarmUp = 2, kTimed = 5;
  for (int i = 0; i < kWarmUp; ++i) NCCL_OK(launch(), rank.comm);
  CUDA_OK(cudaStreamSynchronize(rank.stream));
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kTimed; ++i) NCCL_OK(launch(), rank.comm);
  CUDA_OK(cudaStreamSynchronize(rank.stream));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count() /
      kTimed;
  if (rank.index != 0) return;
  std::lock_guard<std::mutex> lock(printing);
  std::printf("BUSBW %s %zu bytes: %.1f us, busbw %.2f GB/s\n", name,
              busbwBytes, seconds * 1e6, factor * busbwBytes / seconds / 1e9);
}

void timeCollectives(Rank& r, int n) {
  const size_t count = busbwBytes / sizeof(float);
  timeLaunches(r, "all-reduce", 2.0 * (n - 1) / n, [&] {
    return ncclAllReduce(r.timedSend, r.timedRecv, count, ncclFloat32, ncclSum,
                         r.comm, r.stream);
  });
  timeLaunches(r, "send/receive ring", 1.0, [&] {
    return sendReceiveRing(r, n, r.timedSend, r.timedRecv, count);
  });
}

void allocate(Rank& rank, int nranks) {
  CUDA_OK(cudaSetDevice(rank.device));
  CUDA_OK(cudaStreamCreateWithFlags(&rank.stream, cudaStreamNonBlocking));
  CUDA_OK(cudaMalloc(&rank.send, nranks * kCount * sizeof(float)));
  CUDA_OK(cudaMalloc(&rank.recv, nranks * kCount * sizeof(float)));
  std::vector<float> input(nranks * kCount, float(rank.index + 1));
  CUDA_OK(cudaMemcpy(rank.send, input.data(), input.size() * sizeof(float),
                     cudaMemcpyHostToDevice));
  if (busbwBytes == 0) return;
  CUDA_OK(cudaMalloc(&rank.timedSend, busbwBytes));
  CUDA_OK(cudaMalloc(&rank.timedRecv, busbwBytes));
  CUDA_OK(cudaMemset(rank.timedSend, 0, busbwBytes));
}

// The collectives of the check, by name: each enqueues one rank's call.
struct Collective {
  const char* name;
  ncclResult_t (*issue)(Rank& rank, int nranks);
  // The value element i of the output must hold, and how many elements.
  float (*expected)(size_t i, int rank, int nranks);
  size_t (*outputCount)(int nranks);
};

float sumOfRanks(int nranks) { return nranks * (nranks + 1) / 2.0f; }

const Collective kCollectives[] = {
    {"all-reduce",
     [](Rank& r, int) {
       return ncclAllReduce(r.send, r.recv, kCount, ncclFloat32, ncclSum,
                            r.comm, r.stream);
     },
     [](size_t, int, int n) { return sumOfRanks(n); },
     [](int) { return kCount; }},
    {"all-gather",
     [](Rank& r, int) {
       return ncclAllGather(r.send, r.recv, kCount, ncclFloat32, r.comm,
                            r.stream);
     },
     [](size_t i, int, int) { return float(i / kCount + 1); },
     [](int n) { return n * kCount; }},
    {"reduce-scatter",
     [](Rank& r, int) {
       return ncclReduceScatter(r.send, r.recv, kCount, ncclFloat32, ncclSum,
                                r.comm, r.stream);
     },
     [](size_t, int, int n) { return sumOfRanks(n); },
     [](int) { return kCount; }},
    {"broadcast from rank 1",
     [](Rank& r, int) {
       return ncclBroadcast(r.send, r.recv, kCount, ncclFloat32, 1, r.comm,
                            r.stream);
     },
     [](size_t, int, int) { return 2.0f; }, [](int) { return kCount; }},
    {"send/receive ring",
     [](Rank& r, int n) {
       return sendReceiveRing(r, n, r.send, r.recv, kCount);
     },
     [](size_t, int rank, int n) { return float((rank + n - 1) % n + 1); },
     [](int) { return kCount; }},
};

// Rank 0's reduce, checked on rank 0 only.
ncclResult_t reduceToRankZero(Rank& r) {
  return ncclReduce(r.send, r.recv, kCount, ncclFloat32, ncclSum, 0, r.comm,
                    r.stream);
}

bool outputRight(const Rank& rank, const Collective& c, int nranks) {
  const size_t count = c.outputCount(nranks);
  std::vector<float> out(count);
  CUDA_OK(cudaSetDevice(rank.device));
  CUDA_OK(cudaMemcpy(out.data(), rank.recv, count * sizeof(float),
                     cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < count; ++i)
    if (out[i] != c.expected(i, rank.index, nranks)) return false;
  return true;
}

bool deviceIs(int device) {
  int current = -1;
  CUDA_OK(cudaGetDevice(&current));
  return current == device;
}

// One thread drives every rank: each collective for all of them in one
// group, then every stream is waited for.
void runGrouped(std::vector<Rank>& ranks) {
  const int n = static_cast<int>(ranks.size());
  for (const Collective& c : kCollectives) {
    bool devices = true;
    NCCL_OK(ncclGroupStart(), nullptr);
    for (Rank& r : ranks) {
      CUDA_OK(cudaSetDevice(r.device));
      NCCL_OK(c.issue(r, n), r.comm);
      devices &= deviceIs(r.device);
    }
    NCCL_OK(ncclGroupEnd(), nullptr);
    devices &= deviceIs(ranks.back().device);
    for (Rank& r : ranks) CUDA_OK(cudaStreamSynchronize(r.stream));
    bool right = true;
    for (Rank& r : ranks) right &= outputRight(r, c, n);
    check(right, std::string("grouped ") + c.name + " over " +
                     std::to_string(n) + " communicators");
    check(devices, std::string("grouped ") + c.name +
                       ": the caller's device stays current");
  }
  NCCL_OK(ncclGroupStart(), nullptr);
  for (Rank& r : ranks) {
    CUDA_OK(cudaSetDevice(r.device));
    NCCL_OK(reduceToRankZero(r), r.comm);
  }
  NCCL_OK(ncclGroupEnd(), nullptr);
  for (Rank& r : ranks) CUDA_OK(cudaStreamSynchronize(r.stream));
  const Collective reduce = {"reduce", nullptr, kCollectives[0].expected,
                             kCollectives[0].outputCount};
  check(outputRight(ranks[0], reduce, n), "grouped reduce to rank 0");
}

// One thread per rank, each with its own communicator's calls.
void runThread(Rank& rank, int n, const ncclUniqueId& id) {
  CUDA_OK(cudaSetDevice(rank.device));
  NCCL_OK(ncclCommInitRank(&rank.comm, n, id, rank.index), nullptr);
  check(deviceIs(rank.device), "thread of rank " + std::to_string(rank.index) +
                                   ": init leaves its device current");
  for (const Collective& c : kCollectives) {
    NCCL_OK(c.issue(rank, n), rank.comm);
    const bool device = deviceIs(rank.device);
    CUDA_OK(cudaStreamSynchronize(rank.stream));
    check(outputRight(rank, c, n) && device,
          "thread of rank " + std::to_string(rank.index) + ": " + c.name);
  }
  if (busbwBytes > 0) timeCollectives(rank, n);
}

// One thread initializes every rank in one group: the device current at
// each ncclCommInitRank is the rank's, and the inits complete together at
// ncclGroupEnd.
void initGrouped(std::vector<Rank>& ranks) {
  ncclUniqueId id;
  NCCL_OK(ncclGetUniqueId(&id), nullptr);
  const int n = static_cast<int>(ranks.size());
  NCCL_OK(ncclGroupStart(), nullptr);
  for (Rank& r : ranks) {
    CUDA_OK(cudaSetDevice(r.device));
    NCCL_OK(ncclCommInitRank(&r.comm, n, id, r.index), nullptr);
  }
  NCCL_OK(ncclGroupEnd(), nullptr);
  check(deviceIs(ranks.back().device),
        "grouped ncclCommInitRank leaves the last device set current");
}

void initAll(std::vector<Rank>& ranks) {
  const int n = static_cast<int>(ranks.size());
  std::vector<int> devices;
  for (const Rank& r : ranks) devices.push_back(r.device);
  std::vector<ncclComm_t> comms(n);
  NCCL_OK(ncclCommInitAll(comms.data(), n, devices.data()), nullptr);
  check(deviceIs(devices[0]), "ncclCommInitAll leaves the device current");
  for (int i = 0; i < n; ++i) ranks[i].comm = comms[i];
}

std::vector<int> parseDevices(const char* list) {
  std::vector<int> devices;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');)
    devices.push_back(std::atoi(item.c_str()));
  return devices;
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  bool threads = false, groupedInit = false;
  std::vector<int> devices;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--threads") == 0) {
      threads = true;
    } else if (std::strcmp(argv[i], "--grouped-init") == 0) {
      groupedInit = true;
    } else if (std::strcmp(argv[i], "--devices") == 0 && i + 1 < argc) {
      devices = parseDevices(argv[++i]);
    } else if (std::strcmp(argv[i], "--busbw") == 0 && i + 1 < argc) {
      busbwBytes = std::strtoull(argv[++i], nullptr, 10) / 4 * 4;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--threads | --grouped-init] "
                   "[--devices 0,1,...] [--busbw BYTES]\n",
                   argv[0]);
      return 2;
    }
  }
  if (devices.empty()) {
    int count = 0;
    CUDA_OK(cudaGetDeviceCount(&count));
    for (int d = 0; d < count; ++d) devices.push_back(d);
  }
  const int n = static_cast<int>(devices.size());
  if (n < 2) {
    std::printf(
        "FAIL single_process_check needs 2 ranks or more (devices "
        "found: %d; --devices 0,0 puts two on one GPU)\n",
        n);
    return 1;
  }
  int version = 0;
  ncclGetVersion(&version);
  std::printf("single_process_check: %d ranks on devices", n);
  for (int d : devices) std::printf(" %d", d);
  std::printf(", %s, library version %d\n",
              threads       ? "a thread per rank"
              : groupedInit ? "one thread, grouped ncclCommInitRank"
                            : "one thread, ncclCommInitAll",
              version);
  std::vector<Rank> ranks;
  for (int i = 0; i < n; ++i) ranks.push_back({i, devices[i]});
  for (Rank& r : ranks) allocate(r, n);
  CUDA_OK(cudaSetDevice(devices[0]));
  if (threads) {
    ncclUniqueId id;
    NCCL_OK(ncclGetUniqueId(&id), nullptr);
    std::vector<std::thread> workers;
    for (Rank& r : ranks) workers.emplace_back(runThread, std::ref(r), n, id);
    for (std::thread& t : workers) t.join();
  } else {
    if (groupedInit)
      initGrouped(ranks);
    else
      initAll(ranks);
    runGrouped(ranks);
  }
  for (Rank& r : ranks) {
    CUDA_OK(cudaSetDevice(r.device));
    ncclCommDestroy(r.comm);
    cudaFree(r.send);
    cudaFree(r.recv);
    cudaFree(r.timedSend);
    cudaFree(r.timedRecv);
    cudaStreamDestroy(r.stream);
  }
  std::printf("%s single_process_check (%d failure(s))\n",
              failures == 0 ? "PASS" : "FAIL", failures);
  return failures == 0 ? 0 : 1;
}
