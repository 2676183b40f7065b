// GPU checks of heterogeneous communicators that need real CUDA streams:
// two GPU ranks (processes) forced into two domains. For stream-driven
// collectives (all-reduce, all-gather) and a staged one (reduce), the NCCL call
// must return while the stream is still held back (it only enqueues), and the
// result must be right once the stream runs; under CUDA graph capture the call
// must fail with ncclInvalidUsage and a message, and the communicator stay
// usable.
//
// Usage: hetero_stream_check <libhetccl-cuda.so>   (rank r on GPU r % count;
//        one GPU is enough)
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "hetccl.h"
#include "nccl.h"
#include "runtime/device/device_module.h"

namespace {

int failures = 0;

void check(bool ok, int rank, const char* what) {
  std::printf("%s rank %d: %s\n", ok ? "PASS" : "FAIL", rank, what);
  if (!ok) ++failures;
}

#define CUDA_OK(call)                                                   \
  do {                                                                  \
    cudaError_t status_ = (call);                                       \
    if (status_ != cudaSuccess) {                                       \
      std::printf("FAIL %s: %s\n", #call, cudaGetErrorString(status_)); \
      std::exit(1);                                                     \
    }                                                                   \
  } while (0)

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

  checkEnqueueOnly(rank, gate, stream, "all-reduce (stream-driven)", [&] {
    return ncclAllReduce(send, recv, count, ncclFloat32, ncclSum, comm, stream);
  });
  std::vector<float> result(2 * count);
  CUDA_OK(cudaMemcpy(result.data(), recv, count * sizeof(float),
                     cudaMemcpyDeviceToHost));
  bool right = true;
  for (size_t i = 0; i < count; ++i) right &= result[i] == 3.0f;
  check(right, rank, "all-reduce result");

  checkEnqueueOnly(rank, gate, stream, "all-gather (stream-driven)", [&] {
    return ncclAllGather(send, recv, count, ncclFloat32, comm, stream);
  });
  CUDA_OK(cudaMemcpy(result.data(), recv, 2 * count * sizeof(float),
                     cudaMemcpyDeviceToHost));
  right = true;
  for (size_t i = 0; i < 2 * count; ++i)
    right &= result[i] == (i < count ? 1.0f : 2.0f);
  check(right, rank, "all-gather result");

  checkEnqueueOnly(rank, gate, stream, "reduce (staged)", [&] {
    return ncclReduce(send, recv, count, ncclFloat32, ncclSum, 0, comm, stream);
  });
  if (rank == 0) {
    CUDA_OK(cudaMemcpy(result.data(), recv, count * sizeof(float),
                       cudaMemcpyDeviceToHost));
    right = true;
    for (size_t i = 0; i < count; ++i) right &= result[i] == 3.0f;
    check(right, rank, "reduce result at the root");
  }

  CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed));
  ncclResult_t captured =
      ncclAllReduce(send, recv, count, ncclFloat32, ncclSum, comm, stream);
  std::string message = ncclGetLastError(comm);
  cudaGraph_t graph = nullptr;
  cudaStreamEndCapture(stream, &graph);
  if (graph != nullptr) cudaGraphDestroy(graph);
  check(captured == ncclInvalidUsage &&
            message.find("graph") != std::string::npos,
        rank, ("graph capture refused: " + message).c_str());

  ncclResult_t after =
      ncclAllReduce(send, recv, count, ncclFloat32, ncclMax, comm, stream);
  CUDA_OK(cudaStreamSynchronize(stream));
  CUDA_OK(
      cudaMemcpy(result.data(), recv, sizeof(float), cudaMemcpyDeviceToHost));
  check(after == ncclSuccess && result[0] == 2.0f, rank,
        "communicator usable after the refused capture");

  ncclCommDestroy(comm);
  cudaFree(send);
  cudaFree(recv);
  cudaStreamDestroy(stream);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <libhetccl-cuda.so>\n", argv[0]);
    return 2;
  }
  // Line by line: a run cut short by a timeout still shows how far it got.
  setvbuf(stdout, nullptr, _IOLBF, 0);
  setenv("HETCCL_DOMAINS", "split:2", 1);
  if (getenv("HETCCL_COMM_ID") == nullptr)
    setenv("HETCCL_COMM_ID", "127.0.0.1:29731", 1);
  std::fflush(stdout);
  pid_t children[2];
  for (int rank = 0; rank < 2; ++rank) {
    children[rank] = fork();
    if (children[rank] == 0) {
      runRank(rank, loadModule(argv[1]));
      std::fflush(stdout);
      _exit(failures == 0 ? 0 : 1);
    }
  }
  int failed = 0;
  for (pid_t child : children) {
    int status = 0;
    waitpid(child, &status, 0);
    failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::printf("%s hetero_stream_check\n", failed ? "FAIL" : "PASS");
  return failed ? 1 : 0;
}
