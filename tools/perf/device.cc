#include "perf/device.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "perf/perf_error.h"

namespace hetccl {
namespace perf {
namespace {

constexpr size_t kHostAlignment = 4096;

class HostDevice : public Device {
 public:
  explicit HostDevice(const NcclApi& nccl) : nccl_(nccl) {}

  std::string describe() const override { return "host"; }

  void* allocate(size_t bytes) override {
    // Page-aligned like device allocations; at least one page so that a
    // zero-byte run still has a valid address.
    const size_t rounded =
        (bytes + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
    void* pointer =
        std::aligned_alloc(kHostAlignment, rounded ? rounded : kHostAlignment);
    if (!pointer) perfFail("out of host memory allocating %zu bytes", bytes);
    return pointer;
  }
  void release(void* pointer) override { std::free(pointer); }
  bool hostAccessible() const override { return true; }
  void copyToDevice(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  void copyToHost(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  cudaStream_t createStream() override {
    cudaStream_t stream = nullptr;
    nccl_.check(nccl_.streamCreate(&stream), "hetcclStreamCreate", nullptr);
    return stream;
  }
  void destroyStream(cudaStream_t stream) override {
    nccl_.streamDestroy(stream);
  }
  // A host stream fails its wait itself when an operation on it failed.
  void synchronize(cudaStream_t stream, ncclComm_t) override {
    nccl_.check(nccl_.streamSynchronize(stream), "hetcclStreamSynchronize",
                nullptr);
  }

 private:
  const NcclApi& nccl_;
};

// The part of the CUDA runtime API the tool uses. HIP's API has the same
// shapes under the "hip" prefix (and the same memcpy-kind values), so one
// table serves both.
struct VendorApi {
  using Status = int;
  std::string prefix;
  Status (*getDeviceCount)(int*);
  Status (*setDevice)(int);
  Status (*getDevice)(int*);
  Status (*malloc)(void**, size_t);
  Status (*free)(void*);
  Status (*memcpy)(void*, const void*, size_t, int);
  Status (*streamCreateWithFlags)(cudaStream_t*, unsigned);
  Status (*streamSynchronize)(cudaStream_t);
  Status (*streamQuery)(cudaStream_t);
  Status (*streamDestroy)(cudaStream_t);
  Status (*deviceGetPCIBusId)(char*, int, int);
  const char* (*getErrorString)(Status);
};

constexpr int kMemcpyHostToDevice = 1;
constexpr int kMemcpyDeviceToHost = 2;
constexpr unsigned kStreamNonBlocking = 1;
// cudaErrorNotReady and hipErrorNotReady: the stream still has work.
constexpr int kNotReady = 600;

template <typename Function>
void resolve(void* library, const std::string& name, Function* function) {
  void* address = dlsym(library, name.c_str());
  if (!address) perfFail("%s not found in the device runtime", name.c_str());
  *function = reinterpret_cast<Function>(address);
}

// Versioned names first, newest first: an unversioned libcudart.so is a
// toolkit's development link and may belong to an older toolkit than the
// runtime that the rest of the process (a PyTorch wheel's) uses.
std::vector<const char*> runtimeLibraries(const std::string& prefix) {
  return prefix == "cuda"
             ? std::vector<const char*>{"libcudart.so.13", "libcudart.so.12",
                                        "libcudart.so.11.0", "libcudart.so"}
             : std::vector<const char*>{"libamdhip64.so.7", "libamdhip64.so.6",
                                        "libamdhip64.so.5", "libamdhip64.so"};
}

std::string runtimeLibraryNames(const std::string& prefix) {
  std::string text;
  for (const char* name : runtimeLibraries(prefix)) {
    text += (text.empty() ? "" : ", ") + std::string(name);
  }
  return text;
}

hetcclRuntimeKind_t runtimeKindOf(const std::string& prefix) {
  return prefix == "cuda" ? hetcclRuntimeCuda : hetcclRuntimeHip;
}

// Loads the CUDA ("cuda") or HIP ("hip") runtime; false if it is not
// installed. The library is never closed: vendor runtimes must outlive every
// allocation and stream, including HetCCL's own.
bool loadVendorApi(const std::string& prefix, VendorApi* api) {
  void* library = nullptr;
  for (const char* name : runtimeLibraries(prefix)) {
    library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (library) break;
  }
  if (!library) return false;
  api->prefix = prefix;
  resolve(library, prefix + "GetDeviceCount", &api->getDeviceCount);
  resolve(library, prefix + "SetDevice", &api->setDevice);
  resolve(library, prefix + "GetDevice", &api->getDevice);
  resolve(library, prefix + "Malloc", &api->malloc);
  resolve(library, prefix + "Free", &api->free);
  resolve(library, prefix + "Memcpy", &api->memcpy);
  resolve(library, prefix + "StreamCreateWithFlags",
          &api->streamCreateWithFlags);
  resolve(library, prefix + "StreamSynchronize", &api->streamSynchronize);
  resolve(library, prefix + "StreamQuery", &api->streamQuery);
  resolve(library, prefix + "StreamDestroy", &api->streamDestroy);
  resolve(library, prefix + "DeviceGetPCIBusId", &api->deviceGetPCIBusId);
  resolve(library, prefix + "GetErrorString", &api->getErrorString);
  return true;
}

class VendorDevice : public Device {
 public:
  VendorDevice(VendorApi api, const NcclApi& nccl)
      : api_(std::move(api)), nccl_(nccl) {
    check(api_.getDevice(&device_), "GetDevice");
  }

  std::string describe() const override {
    char busId[64] = "?";
    api_.deviceGetPCIBusId(busId, sizeof(busId), device_);
    return strprintf("%s:%d [%s]", api_.prefix.c_str(), device_, busId);
  }
  void* allocate(size_t bytes) override {
    void* pointer = nullptr;
    check(api_.malloc(&pointer, bytes ? bytes : 1), "Malloc");
    return pointer;
  }
  void release(void* pointer) override { api_.free(pointer); }
  bool hostAccessible() const override { return false; }
  // A copy from pageable memory may return before it reaches the device,
  // and the benchmark's streams are non-blocking: they would not wait for
  // it. Waiting for the legacy stream, which carries the copy, makes the
  // data land before any launch reads it.
  void copyToDevice(void* dst, const void* src, size_t bytes) override {
    check(api_.memcpy(dst, src, bytes, kMemcpyHostToDevice), "Memcpy");
    check(api_.streamSynchronize(nullptr), "StreamSynchronize");
  }
  void copyToHost(void* dst, const void* src, size_t bytes) override {
    check(api_.memcpy(dst, src, bytes, kMemcpyDeviceToHost), "Memcpy");
  }
  cudaStream_t createStream() override {
    cudaStream_t stream = nullptr;
    check(api_.streamCreateWithFlags(&stream, kStreamNonBlocking),
          "StreamCreateWithFlags");
    return stream;
  }
  void destroyStream(cudaStream_t stream) override {
    api_.streamDestroy(stream);
  }
  // Polls the stream and the communicator in turn, as nccl-tests do.
  void synchronize(cudaStream_t stream, ncclComm_t comm) override {
    for (;;) {
      const VendorApi::Status status = api_.streamQuery(stream);
      if (status == 0) return;
      if (status != kNotReady) check(status, "StreamQuery");
      if (comm != nullptr) checkAsyncError(comm);
    }
  }

 private:
  void check(VendorApi::Status status, const char* call) const {
    if (status == 0) return;
    perfFail("%s%s failed: %s (%d)", api_.prefix.c_str(), call,
             api_.getErrorString(status), status);
  }

  void checkAsyncError(ncclComm_t comm) const {
    ncclResult_t state = ncclSuccess;
    nccl_.check(nccl_.commGetAsyncError(comm, &state), "ncclCommGetAsyncError",
                comm);
    if (state != ncclInProgress)
      nccl_.check(state, "the communicator, while waiting for the stream",
                  comm);
  }

  VendorApi api_;
  const NcclApi& nccl_;
  int device_ = 0;
};

}  // namespace

bool cpuRanksForced() {
  const char* value = std::getenv("HETCCL_FORCE_CPU");
  return value && *value && std::strcmp(value, "0") != 0;
}

GpuSelection selectGpuForRank(int localRank) {
  GpuSelection selection;
  if (cpuRanksForced()) {
    selection.text = "HETCCL_FORCE_CPU asks for CPU ranks";
    return selection;
  }
  selection.text = "no GPU runtime with devices found";
  for (const char* prefix : {"cuda", "hip"}) {
    VendorApi api;
    if (!loadVendorApi(prefix, &api)) continue;
    int count = 0;
    if (api.getDeviceCount(&count) != 0 || count <= 0) continue;
    const int device = localRank % count;
    if (api.setDevice(device) != 0) {
      perfFail("%sSetDevice(%d) failed", prefix, device);
    }
    selection.found = true;
    selection.runtime = runtimeKindOf(prefix);
    selection.text = strprintf("%s device %d of %d", prefix, device, count);
    return selection;
  }
  return selection;
}

bool gpusPresent(std::string* why) {
  std::string seen;
  for (const char* prefix : {"cuda", "hip"}) {
    VendorApi api;
    if (!loadVendorApi(prefix, &api)) {
      seen +=
          strprintf("%sno %s runtime library (%s)", seen.empty() ? "" : "; ",
                    prefix, runtimeLibraryNames(prefix).c_str());
      continue;
    }
    int count = 0;
    const VendorApi::Status status = api.getDeviceCount(&count);
    if (status == 0 && count > 0) {
      *why = strprintf("%d %s device(s)", count, prefix);
      return true;
    }
    seen +=
        strprintf("%s%sGetDeviceCount: %s", seen.empty() ? "" : "; ", prefix,
                  status == 0 ? "0 devices" : api.getErrorString(status));
  }
  *why = seen;
  return false;
}

std::unique_ptr<Device> makeDevice(hetcclRuntimeKind_t kind,
                                   const NcclApi& nccl) {
  if (kind == hetcclRuntimeHost) {
    if (!nccl.hasHetcclExtensions()) {
      perfFail(
          "a CPU rank needs HetCCL's host streams, which %s does not "
          "export",
          nccl.describe().c_str());
    }
    return std::make_unique<HostDevice>(nccl);
  }
  const char* prefix = kind == hetcclRuntimeCuda ? "cuda" : "hip";
  VendorApi api;
  if (!loadVendorApi(prefix, &api)) {
    perfFail(
        "HetCCL placed this rank on a %s GPU, but the %s runtime "
        "library could not be loaded",
        prefix, prefix);
  }
  return std::make_unique<VendorDevice>(std::move(api), nccl);
}

DeviceBuffer::DeviceBuffer(Device& device, size_t bytes)
    : device_(device), pointer_(device.allocate(bytes)), bytes_(bytes) {}

DeviceBuffer::~DeviceBuffer() { device_.release(pointer_); }

DeviceStream::DeviceStream(Device& device)
    : device_(device), stream_(device.createStream()) {}

DeviceStream::~DeviceStream() { device_.destroyStream(stream_); }

}  // namespace perf
}  // namespace hetccl
