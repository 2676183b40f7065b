// Loads each device-runtime module that this build produced and checks its
// table where no GPU is needed: the module must load without a GPU (and,
// for CUDA, without a driver), export its entry point and nothing of its
// runtime, answer device queries with an error or zero devices, and reject
// reductions it cannot run before touching the runtime.
//
// The second part runs the modules' kernel code (device_kernels.h) on the
// CPU, one emulated thread after another, and compares it with hostReduce
// bit for bit: the indexing (head, packs, rest; grid-stride loops), the
// dispatch and the arithmetic, everywhere CI runs. The GPU's own arithmetic
// is checked by tests/gpu/device_module_check on a GPU machine.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "nccl.h"
#include "runtime/device/device_module.h"
#include "runtime/host/host_reduce.h"
#include "support/low_latency_expected.h"
#include "util/dtype.h"

// The CUDA/HIP builtins that device_kernels.h uses, for one emulated
// thread at a time. A grid runs serially, so a block's barrier has nothing
// to wait for; the low-latency test runs a grid per rank, each in a thread
// of its own, hence thread-local indices.
struct EmulatedDim3 {
  unsigned x = 1, y = 1, z = 1;
};
static thread_local EmulatedDim3 threadIdx, blockIdx, blockDim, gridDim;
#define HETCCL_DEVICE_KERNELS_ON_HOST 1
#define __device__
#define __global__
#define __syncthreads()
#define __shared__ static thread_local
#include "runtime/device/device_kernels.h"
#undef __shared__
#undef __syncthreads
#undef __global__
#undef __device__

namespace hetccl {
namespace {

struct ModuleUnderTest {
  const char* runtime;  // the table's runtimeName
  const char* path;     // nullptr when this build has no such module
  // Functions the module holds or calls but must not export.
  std::vector<const char*> privateSymbols;
};

// How gtest names a case in its listing (the suffix already says it; this
// keeps gtest from dumping the struct's bytes).
void PrintTo(const ModuleUnderTest& module, std::ostream* out) {
  *out << module.runtime;
}

// The mangled name of one kernel of the HIP module (nvcc makes its kernels
// local by itself).
constexpr const char* kHipKernelSymbol =
    "_ZN6hetccl6device12reduceKernelINS0_12NativeFormatIfEENS0_5SumOpELb0ELb0E"
    "EEvNS0_10ReduceArgsIT_EE";

#ifdef HETCCL_CUDA_MODULE_PATH
constexpr const char* kCudaModulePath = HETCCL_CUDA_MODULE_PATH;
#else
constexpr const char* kCudaModulePath = nullptr;
#endif
#ifdef HETCCL_HIP_MODULE_PATH
constexpr const char* kHipModulePath = HETCCL_HIP_MODULE_PATH;
#else
constexpr const char* kHipModulePath = nullptr;
#endif

class DeviceModuleTable : public ::testing::TestWithParam<ModuleUnderTest> {
 protected:
  void SetUp() override {
    const ModuleUnderTest& module = GetParam();
    if (module.path == nullptr)
      GTEST_SKIP() << "the " << module.runtime
                   << " module is not built in this configuration";
    // Never closed: runtimes register exit handlers inside the module.
    handle_ = dlopen(module.path, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr)
        << "dlopen " << module.path << ": " << dlerror();
    auto entry = reinterpret_cast<hetcclDeviceModuleEntry>(
        dlsym(handle_, HETCCL_DEVICE_MODULE_ENTRY));
    ASSERT_NE(entry, nullptr)
        << module.path << " does not export " << HETCCL_DEVICE_MODULE_ENTRY;
    table_ = entry();
    ASSERT_NE(table_, nullptr);
  }

  void* handle_ = nullptr;
  const hetcclDeviceModuleTable* table_ = nullptr;
};

TEST_P(DeviceModuleTable, IdentifiesItself) {
  EXPECT_EQ(table_->abiVersion, uint32_t(HETCCL_DEVICE_MODULE_ABI));
  ASSERT_NE(table_->runtimeName, nullptr);
  EXPECT_STREQ(table_->runtimeName, GetParam().runtime);
}

TEST_P(DeviceModuleTable, EveryFunctionIsThere) {
  const hetcclDeviceModuleTable& t = *table_;
  const void* const functions[] = {
      reinterpret_cast<const void*>(t.errorString),
      reinterpret_cast<const void*>(t.versions),
      reinterpret_cast<const void*>(t.deviceCount),
      reinterpret_cast<const void*>(t.getDevice),
      reinterpret_cast<const void*>(t.setDevice),
      reinterpret_cast<const void*>(t.deviceBusId),
      reinterpret_cast<const void*>(t.memoryKind),
      reinterpret_cast<const void*>(t.deviceAlloc),
      reinterpret_cast<const void*>(t.deviceFree),
      reinterpret_cast<const void*>(t.hostAlloc),
      reinterpret_cast<const void*>(t.hostFree),
      reinterpret_cast<const void*>(t.hostRegister),
      reinterpret_cast<const void*>(t.hostUnregister),
      reinterpret_cast<const void*>(t.streamCreate),
      reinterpret_cast<const void*>(t.streamDestroy),
      reinterpret_cast<const void*>(t.streamSynchronize),
      reinterpret_cast<const void*>(t.streamQuery),
      reinterpret_cast<const void*>(t.streamIsCapturing),
      reinterpret_cast<const void*>(t.eventCreate),
      reinterpret_cast<const void*>(t.eventDestroy),
      reinterpret_cast<const void*>(t.eventRecord),
      reinterpret_cast<const void*>(t.eventQuery),
      reinterpret_cast<const void*>(t.eventSynchronize),
      reinterpret_cast<const void*>(t.streamWaitEvent),
      reinterpret_cast<const void*>(t.copyAsync),
      reinterpret_cast<const void*>(t.copy2DAsync),
      reinterpret_cast<const void*>(t.writeValue64),
      reinterpret_cast<const void*>(t.waitValue64),
      reinterpret_cast<const void*>(t.waitBits64),
      reinterpret_cast<const void*>(t.reduceAsync),
      reinterpret_cast<const void*>(t.lowLatencyCollective),
      reinterpret_cast<const void*>(t.stagedCopy),
      reinterpret_cast<const void*>(t.loadKernels),
      reinterpret_cast<const void*>(t.timingEventCreate),
      reinterpret_cast<const void*>(t.eventElapsedMs),
      reinterpret_cast<const void*>(t.dmaBufSupported),
      reinterpret_cast<const void*>(t.exportDmaBuf),
  };
  // Every pointer member of the table is listed above.
  static_assert(
      sizeof(functions) == sizeof(hetcclDeviceModuleTable) -
                               offsetof(hetcclDeviceModuleTable, errorString),
      "a table entry is missing from this test");
  for (size_t i = 0; i < sizeof(functions) / sizeof(functions[0]); ++i)
    EXPECT_NE(functions[i], nullptr) << "entry " << i << " is null";
}

// The base address of the object that defines what `handle` resolves
// `symbol` to (the module or one of its dependencies), or nullptr.
const void* definingObject(void* handle, const char* symbol) {
  void* address = dlsym(handle, symbol);
  Dl_info info{};
  if (address == nullptr || dladdr(address, &info) == 0) return nullptr;
  return info.dli_fbase;
}

TEST_P(DeviceModuleTable, ExportsOnlyItsEntryPoint) {
  // A statically linked runtime that leaked its symbols could take over
  // the calls of the program's own runtime (and the reverse). Symbols
  // found in the module's dependencies (libamdhip64) are fine.
  const void* module = definingObject(handle_, HETCCL_DEVICE_MODULE_ENTRY);
  ASSERT_NE(module, nullptr);
  for (const char* symbol : GetParam().privateSymbols) {
    EXPECT_NE(definingObject(handle_, symbol), module)
        << symbol << " is exported by " << GetParam().path;
  }
}

TEST_P(DeviceModuleTable, DeviceCountAnswersWithoutCrashing) {
  int count = -1;
  const int code = table_->deviceCount(&count);
  if (code != 0) {
    const char* message = table_->errorString(code);
    ASSERT_NE(message, nullptr);
    EXPECT_GT(std::strlen(message), 0u);
    std::printf("%s: deviceCount -> error %d (%s)\n", GetParam().runtime, code,
                message);
  } else {
    EXPECT_GE(count, 0);
    std::printf("%s: deviceCount -> %d devices\n", GetParam().runtime, count);
  }
  int runtimeVersion = -1, driverVersion = -1;
  const int versionCode = table_->versions(&runtimeVersion, &driverVersion);
  std::printf("%s: versions -> %d (runtime %d, driver %d)\n",
              GetParam().runtime, versionCode, runtimeVersion, driverVersion);
  if (versionCode == 0) {
    EXPECT_GT(runtimeVersion, 0);
  }
}

// Without a device (CI), every call that needs one fails with a code and
// writes nothing; the CUDA module's driver functions, found lazily, too.
TEST_P(DeviceModuleTable, WithoutDeviceCallsFailCleanly) {
  int count = 0;
  if (table_->deviceCount(&count) == 0 && count > 0)
    GTEST_SKIP() << "this machine has " << count << " device(s)";
  uint64_t word = 0;
  EXPECT_NE(table_->writeValue64(nullptr, &word, 1), 0);
  EXPECT_NE(table_->waitValue64(nullptr, &word, 1), 0);
  EXPECT_NE(table_->waitBits64(nullptr, &word, 1), 0);
  EXPECT_EQ(word, 0u);
  void* pointer = nullptr;
  EXPECT_NE(table_->deviceAlloc(&pointer, 4096), 0);
  EXPECT_NE(table_->hostAlloc(&pointer, 4096), 0);
  EXPECT_EQ(pointer, nullptr);
  void* stream = nullptr;
  EXPECT_NE(table_->streamCreate(&stream), 0);
  EXPECT_EQ(stream, nullptr);
  void* event = nullptr;
  EXPECT_NE(table_->eventCreate(&event), 0);
  EXPECT_EQ(event, nullptr);
  int kind = -1;
  const int code = table_->memoryKind(&word, &kind);
  EXPECT_TRUE(code != 0 || kind == hetcclMemoryUnknown)
      << "code " << code << ", kind " << kind;
  float data[2] = {1, 2};
  hetcclDeviceReduction r{};
  r.dst = data;
  r.srcs[0] = data;
  r.srcs[1] = data + 1;
  r.nsrcs = 2;
  r.count = 1;
  r.dtype = ncclFloat32;
  r.op = ncclSum;
  EXPECT_NE(table_->reduceAsync(&r, nullptr), 0);
  EXPECT_EQ(data[0], 1.0f);
  // No DMA-BUF without a device: not supported, or an error saying why.
  int supported = -1;
  const int dmaBuf = table_->dmaBufSupported(&supported);
  EXPECT_EQ(supported, 0) << "code " << dmaBuf;
  int fd = -1;
  uint64_t offset = 0;
  EXPECT_NE(table_->exportDmaBuf(data, &fd, &offset), 0);
  EXPECT_EQ(fd, -1);
}

TEST_P(DeviceModuleTable, ErrorStringsAreMessages) {
  for (int code : {0, 1, 2, 100, 12345}) {
    const char* message = table_->errorString(code);
    ASSERT_NE(message, nullptr) << "code " << code;
    EXPECT_GT(std::strlen(message), 0u) << "code " << code;
  }
}

// Reductions the kernels cannot run are refused before the runtime is
// asked for anything, so this holds on machines without a GPU.
TEST_P(DeviceModuleTable, RejectsInvalidReductions) {
  float a[4] = {1, 2, 3, 4};
  float b[4] = {4, 3, 2, 1};
  auto valid = [&] {
    hetcclDeviceReduction r{};
    r.dst = a;
    r.srcs[0] = a;
    r.srcs[1] = b;
    r.nsrcs = 2;
    r.count = 4;
    r.dtype = ncclFloat32;
    r.op = ncclSum;
    return r;
  };
  struct Case {
    const char* what;
    void (*spoil)(hetcclDeviceReduction&);
  };
  const Case cases[] = {
      {"no sources", [](hetcclDeviceReduction& r) { r.nsrcs = 0; }},
      {"too many sources",
       [](hetcclDeviceReduction& r) {
         r.nsrcs = HETCCL_DEVICE_MAX_SOURCES + 1;
       }},
      {"dtype out of range",
       [](hetcclDeviceReduction& r) { r.dtype = ncclNumTypes; }},
      {"negative dtype", [](hetcclDeviceReduction& r) { r.dtype = -1; }},
      {"avg is not an operator here",
       [](hetcclDeviceReduction& r) { r.op = ncclAvg; }},
      {"zero divisor",
       [](hetcclDeviceReduction& r) {
         r.applyDivisor = 1;
         r.divisor = 0;
       }},
      {"null source", [](hetcclDeviceReduction& r) { r.srcs[1] = nullptr; }},
      {"null destination", [](hetcclDeviceReduction& r) { r.dst = nullptr; }},
      {"misaligned element",
       [](hetcclDeviceReduction& r) {
         r.srcs[1] = static_cast<const char*>(r.srcs[1]) + 1;
       }},
  };
  for (const Case& c : cases) {
    hetcclDeviceReduction r = valid();
    c.spoil(r);
    EXPECT_NE(table_->reduceAsync(&r, nullptr), 0) << c.what;
  }
  EXPECT_NE(table_->reduceAsync(nullptr, nullptr), 0) << "null reduction";
  // Nothing to do is done at once, whatever the pointers.
  hetcclDeviceReduction empty = valid();
  empty.count = 0;
  empty.dst = nullptr;
  empty.srcs[0] = empty.srcs[1] = nullptr;
  EXPECT_EQ(table_->reduceAsync(&empty, nullptr), 0);
  // Neither were the inputs touched.
  EXPECT_EQ(a[0], 1.0f);
  EXPECT_EQ(b[3], 1.0f);
}

// ---- The kernels' code on the CPU ----

// Launches by running every thread of a small grid in turn (at most
// kEmulatedBlocks x kEmulatedThreads, so that the grid-stride loops turn
// several times), and copies with memmove.
class EmulatedLauncher {
 public:
  static constexpr unsigned kEmulatedBlocks = 3;
  static constexpr unsigned kEmulatedThreads = 7;

  template <typename Args>
  int launch(void (*kernel)(Args), const Args& args,
             device::LaunchShape shape) {
    ++launches;
    EXPECT_GE(shape.blocks, 1u);
    EXPECT_EQ(shape.threads, device::kThreadsPerBlock);
    gridDim.x = std::min(shape.blocks, kEmulatedBlocks);
    blockDim.x = kEmulatedThreads;
    for (blockIdx.x = 0; blockIdx.x < gridDim.x; ++blockIdx.x) {
      for (threadIdx.x = 0; threadIdx.x < blockDim.x; ++threadIdx.x)
        kernel(args);
    }
    return 0;
  }

  int copy(void* dst, const void* src, size_t bytes) {
    ++copies;
    std::memmove(dst, src, bytes);
    return 0;
  }

  int invalidValue() const { return 1; }

  int launches = 0;
  int copies = 0;
};

class Xorshift {
 public:
  uint64_t next() {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    return state_;
  }

 private:
  uint64_t state_ = 88172645463325252ull;
};

bool isNaNBits(ncclDataType_t dtype, uint64_t bits) {
  switch (dtype) {
    case ncclFloat16:
      return (bits & 0x7c00) == 0x7c00 && (bits & 0x3ff) != 0;
    case ncclBfloat16:
      return (bits & 0x7f80) == 0x7f80 && (bits & 0x7f) != 0;
    case ncclFloat32:
      return (bits & 0x7f800000) == 0x7f800000 && (bits & 0x7fffff) != 0;
    case ncclFloat64:
      return (bits >> 52 & 0x7ff) == 0x7ff && (bits << 12) != 0;
    case ncclFloat8e4m3:
      return (bits & 0x7f) == 0x7f;
    case ncclFloat8e5m2:
      return (bits & 0x7c) == 0x7c && (bits & 0x3) != 0;
    default:
      return false;
  }
}

// Buffers are placed at the start of a 16-byte aligned allocation, all
// shifted by one element (a head before the packs), shifted by different
// amounts (no packs), or dst being the first source.
enum class Layout { kAligned, kShifted, kMixed, kInPlace };

struct KernelCase {
  ncclDataType_t dtype;
  ncclRedOp_t op;
  bool scaled;
  bool divided;
  int nsrcs;
  size_t count;
  Layout layout;
  uint64_t preScale;
  uint64_t divisor;

  std::string name() const {
    return std::string(dtypeName(dtype)) + " " + redOpName(op) +
           (scaled ? " prescale" : "") + (divided ? " divisor" : "") +
           " nsrcs=" + std::to_string(nsrcs) +
           " count=" + std::to_string(count) +
           " layout=" + std::to_string(int(layout)) +
           " divisor=" + std::to_string(divisor);
  }
};

constexpr size_t kMaxKernelCount = 1001;
constexpr size_t kKernelSlack = 8;  // elements of room around the buffers

class DeviceKernelsOnHost : public ::testing::TestWithParam<ncclDataType_t> {
 protected:
  // Random bit patterns: every class of value of every format (NaNs,
  // infinities, subnormals) turns up, and integers wrap.
  void SetUp() override {
    const size_t bytes = (kMaxKernelCount + 2 * kKernelSlack) * size();
    for (auto& source : sources_) {
      source.assign(bytes / 8 + 2, 0);
      for (auto& word : source) word = random_.next();
    }
  }

  size_t size() const { return dtypeSize(GetParam()); }

  char* sourceBytes(int s) {
    return reinterpret_cast<char*>(sources_[s].data());
  }

  // Runs one case through enqueueReduction and hostReduce; returns the
  // launcher for the caller's checks of how it was run.
  EmulatedLauncher run(const KernelCase& c) {
    const size_t sz = size();
    const size_t total = kMaxKernelCount + 2 * kKernelSlack;
    std::vector<uint64_t> got(total * sz / 8 + 2), want(got.size());
    std::memset(got.data(), 0xa5, got.size() * 8);
    std::memset(want.data(), 0xa5, want.size() * 8);
    const size_t dstOffset = c.layout == Layout::kAligned ? 0 : 2;
    char* dst = reinterpret_cast<char*>(got.data()) + dstOffset * sz;
    hetcclDeviceReduction r{};
    std::vector<const void*> hostSrcs(c.nsrcs);
    for (int s = 0; s < c.nsrcs; ++s) {
      const size_t offset = c.layout == Layout::kShifted ? 2
                            : c.layout == Layout::kMixed ? size_t(s % 3) + 1
                                                         : 0;
      r.srcs[s] = hostSrcs[s] = sourceBytes(s) + offset * sz;
    }
    if (c.layout == Layout::kInPlace) {
      std::memcpy(dst, r.srcs[0], c.count * sz);
      r.srcs[0] = dst;
    }
    r.dst = dst;
    r.nsrcs = c.nsrcs;
    r.count = c.count;
    r.dtype = c.dtype;
    r.op = c.op;
    r.applyPreScale = c.scaled;
    r.preScale = c.preScale;
    r.applyDivisor = c.divided;
    r.divisor = c.divisor;
    EmulatedLauncher launcher;
    EXPECT_EQ(device::enqueueReduction(r, launcher), 0) << c.name();
    Reduction reduction{c.dtype, c.op};
    if (c.scaled) reduction.preScale = &c.preScale;
    if (c.divided) reduction.divisor = c.divisor;
    hostReduce(reinterpret_cast<char*>(want.data()) + dstOffset * sz,
               hostSrcs.data(), c.nsrcs, c.count, reduction);
    // Whole buffers: the elements around dst must be untouched too.
    for (size_t i = 0; i < total; ++i) {
      uint64_t a = 0, b = 0;
      std::memcpy(&a, reinterpret_cast<char*>(want.data()) + i * sz, sz);
      std::memcpy(&b, reinterpret_cast<char*>(got.data()) + i * sz, sz);
      if (a == b || (isNaNBits(c.dtype, a) && isNaNBits(c.dtype, b))) continue;
      ADD_FAILURE() << c.name() << ": element " << i << " is " << std::hex << b
                    << ", hostReduce gives " << a;
      break;
    }
    return launcher;
  }

  Xorshift random_;
  std::vector<uint64_t> sources_[HETCCL_DEVICE_MAX_SOURCES];
};

TEST_P(DeviceKernelsOnHost, EqualHostReduceBitForBit) {
  const size_t counts[] = {0, 1, 7, 15, 16, 17, 33, 100, kMaxKernelCount};
  const uint64_t divisors[] = {3, 1, 7, uint64_t(1) << 63, 1000, 2};
  size_t index = 0;
  for (ncclRedOp_t op : {ncclSum, ncclProd, ncclMax, ncclMin}) {
    for (int mode = 0; mode < 4; ++mode) {
      for (int nsrcs : {1, 2, 3, 5, 8}) {
        for (size_t count : counts) {
          for (Layout layout : {Layout::kAligned, Layout::kShifted,
                                Layout::kMixed, Layout::kInPlace}) {
            ++index;
            const KernelCase c{
                GetParam(), op,     (mode & 1) != 0, (mode & 2) != 0,    nsrcs,
                count,      layout, random_.next(),  divisors[index % 6]};
            const EmulatedLauncher launcher = run(c);
            // One source untouched is a copy; nothing to do is nothing.
            const bool copy = nsrcs == 1 && mode == 0;
            EXPECT_EQ(launcher.launches, count > 0 && !copy ? 1 : 0)
                << c.name();
            if (HasFailure()) return;
          }
        }
      }
    }
  }
}

// The low-latency collectives' kernels, one grid per rank in a thread of
// its own (the ranks wait for each other's lines), against
// lowLatencyExpected, NaNs aside bit for bit, and the same bits on every
// rank where all ranks hold the same result. Each rank runs several
// operations in a row over the same areas and counts, every kind in turn,
// so that the halves alternate and the flags advance; some in place, some
// with buffers aligned to their element only.
TEST_P(DeviceKernelsOnHost, LowLatencyCollectivesEqualHostResults) {
  const size_t sz = size();
  // A reduce-scatter of 8 ranks reads 8 counts of a source.
  const size_t counts[] = {1, 7, 120, 2, 33, 1, 100, 3};
  const int kinds[] = {hetcclLowLatencyAllReduce, hetcclLowLatencyReduceScatter,
                       hetcclLowLatencyAllGather, hetcclLowLatencyBroadcast};
  for (int nranks : {2, 3, 8}) {
    const size_t halfLines = lowlatency::linesFor(nranks * 120 * sz);
    for (int mode = 0; mode < 6; ++mode) {
      const ncclRedOp_t op = mode < 4 ? ncclRedOp_t(mode) : ncclSum;
      std::vector<std::vector<uint64_t>> areas(nranks), counters(nranks);
      std::vector<std::vector<char>> outputs(nranks);
      for (int r = 0; r < nranks; ++r) {
        areas[r].assign(2 * halfLines, 0);
        counters[r].assign(HETCCL_DEVICE_LL_BLOCKS, 0);
      }
      const uint64_t release = 0;
      for (size_t step = 0; step < sizeof(counts) / sizeof(counts[0]); ++step) {
        hetcclDeviceLowLatencyCollective c{};
        c.kind = kinds[(step + mode) % 4];
        c.root = int(step % nranks);
        c.reduction.nsrcs = 1;
        c.reduction.count = counts[step];
        c.reduction.dtype = GetParam();
        c.reduction.op = op;
        c.reduction.applyPreScale = mode == 4;
        c.reduction.preScale = random_.next();
        c.reduction.applyDivisor = mode == 5;
        c.reduction.divisor = uint64_t(nranks);
        c.nranks = nranks;
        c.halfLines = halfLines;
        c.release = &release;
        for (int r = 0; r < nranks; ++r) c.areas[r] = areas[r].data();
        const size_t part = c.reduction.count * sz;
        const bool inPlace = step % 3 == 1;
        const size_t shift = inPlace ? 0 : (step % 2) * sz;
        std::vector<const char*> inputs(nranks);
        for (int r = 0; r < nranks; ++r)
          inputs[r] = sourceBytes(r % HETCCL_DEVICE_MAX_SOURCES) + shift;
        std::vector<std::thread> ranks;
        for (int r = 0; r < nranks; ++r) {
          outputs[r].assign(nranks * part + 16, char(0x5a));
          ranks.emplace_back([&, r, c]() mutable {
            char* out = outputs[r].data() + shift;
            const void* in = inputs[r];
            if (inPlace) {  // NCCL's in-place buffers of each kind
              const bool gather = c.kind == hetcclLowLatencyAllGather;
              const bool scatter = c.kind == hetcclLowLatencyReduceScatter;
              char* own = gather ? out + r * part : out;
              std::memcpy(own, inputs[r], scatter ? nranks * part : part);
              in = own;
              if (scatter) out += r * part;
            }
            // A broadcast's other ranks may pass no input, as in NCCL.
            const bool unread =
                c.kind == hetcclLowLatencyBroadcast && r != c.root && !inPlace;
            c.reduction.srcs[0] = unread ? nullptr : in;
            c.reduction.dst = out;
            c.rank = r;
            c.counts = counters[r].data();
            EmulatedLauncher launcher;
            EXPECT_EQ(device::enqueueLowLatencyCollective(c, launcher), 0);
            EXPECT_EQ(launcher.launches, 1);
          });
        }
        for (std::thread& t : ranks) t.join();
        const std::string what =
            "kind " + std::to_string(c.kind) + ", " + redOpName(op) + " mode " +
            std::to_string(mode) + ", " + std::to_string(nranks) +
            " ranks, step " + std::to_string(step);
        for (int r = 0; r < nranks; ++r) {
          for (int b = 0; b < int(EmulatedLauncher::kEmulatedBlocks); ++b)
            EXPECT_EQ(counters[r][b], step + 1) << what;
          const std::vector<char> want = lowLatencyExpected(c, inputs, r);
          const bool scatter = c.kind == hetcclLowLatencyReduceScatter;
          const char* got =
              outputs[r].data() + shift + (inPlace && scatter ? r * part : 0);
          if (!scatter && r > 0) {
            EXPECT_EQ(std::memcmp(got, outputs[0].data() + shift, want.size()),
                      0)
                << what << ": rank " << r << " differs from rank 0";
          }
          for (size_t i = 0; i < want.size() / sz; ++i) {
            uint64_t w = 0, g = 0;
            std::memcpy(&w, want.data() + i * sz, sz);
            std::memcpy(&g, got + i * sz, sz);
            if (w == g ||
                (isNaNBits(GetParam(), w) && isNaNBits(GetParam(), g)))
              continue;
            ADD_FAILURE() << what << ", rank " << r << ": element " << i
                          << " is " << std::hex << g << ", expected " << w;
            break;
          }
        }
        if (HasFailure()) return;
      }
    }
  }
}

// The staged copy's kernel: every byte of sizes around the pack, with the
// two sides aligned alike or not, after its wait, then its signal.
TEST(StagedCopyKernelOnHost, CopiesEveryByteThenSignals) {
  const size_t sizes[] = {0, 1, 15, 16, 17, 100, 4096, 4096 * 4 + 5};
  std::vector<unsigned char> from(4096 * 5 + 64), to(from.size());
  for (size_t i = 0; i < from.size(); ++i)
    from[i] = static_cast<unsigned char>(i * 7 + 3);
  for (size_t bytes : sizes)
    for (size_t srcShift : {0, 3})
      for (size_t dstShift : {0, 3, 8}) {
        std::fill(to.begin(), to.end(), 0xEE);
        uint64_t waitWord = 5, signalWord = 0;
        hetcclDeviceStagedCopy c{};
        c.src = from.data() + srcShift;
        c.dst = to.data() + dstShift;
        c.bytes = bytes;
        c.waitWord = &waitWord;
        c.waitValue = 5;
        c.signalWord = &signalWord;
        c.signalValue = 9;
        EmulatedLauncher launcher;
        ASSERT_EQ(device::enqueueStagedCopy(c, launcher), 0);
        const std::string where = std::to_string(bytes) + " bytes from +" +
                                  std::to_string(srcShift) + " to +" +
                                  std::to_string(dstShift);
        EXPECT_EQ(launcher.launches, 1) << where;
        EXPECT_EQ(signalWord, 9u) << where;
        EXPECT_TRUE(std::equal(to.begin() + dstShift,
                               to.begin() + dstShift + bytes,
                               from.begin() + srcShift))
            << where;
        EXPECT_EQ(to[dstShift + bytes], 0xEE) << where << ": wrote past";
        if (dstShift > 0) {
          EXPECT_EQ(to[dstShift - 1], 0xEE) << where;
        }
      }
}

// It copies only once the word is raised, by another thread here, and a
// released word ends the wait.
TEST(StagedCopyKernelOnHost, WaitsForItsWord) {
  for (uint64_t raised : {uint64_t{3}, uint64_t{HETCCL_DEVICE_WAIT_RELEASED}}) {
    std::vector<unsigned char> from(1000, 0x11), to(1000, 0);
    uint64_t waitWord = 1, signalWord = 0;
    hetcclDeviceStagedCopy c{};
    c.src = from.data();
    c.dst = to.data();
    c.bytes = from.size();
    c.waitWord = &waitWord;
    c.waitValue = 3;
    c.signalWord = &signalWord;
    c.signalValue = 1;
    std::thread raiser([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      EXPECT_EQ(to[0], 0) << "copied before the word was raised";
      __atomic_store_n(&waitWord, raised, __ATOMIC_RELEASE);
    });
    EmulatedLauncher launcher;
    ASSERT_EQ(device::enqueueStagedCopy(c, launcher), 0);
    raiser.join();
    EXPECT_EQ(to, from);
    EXPECT_EQ(signalWord, 1u);
  }
}

TEST(StagedCopyKernelOnHost, RejectsACopyWithoutItsBuffers) {
  unsigned char byte = 0;
  hetcclDeviceStagedCopy noSource{};
  noSource.dst = &byte, noSource.bytes = 1;
  hetcclDeviceStagedCopy noTarget{};
  noTarget.src = &byte, noTarget.bytes = 1;
  for (const hetcclDeviceStagedCopy& c : {noSource, noTarget}) {
    EmulatedLauncher launcher;
    EXPECT_EQ(device::enqueueStagedCopy(c, launcher), launcher.invalidValue());
    EXPECT_EQ(launcher.launches, 0);
  }
}

// Without a signal word it copies and signals nothing (a ring's counters
// put back to 0).
TEST(StagedCopyKernelOnHost, CopiesWithoutASignal) {
  const uint64_t zeros[4] = {};
  uint64_t counters[4] = {5, 5, 7, 7};
  hetcclDeviceStagedCopy c{};
  c.dst = counters;
  c.src = zeros;
  c.bytes = sizeof(counters);
  EmulatedLauncher launcher;
  ASSERT_EQ(device::enqueueStagedCopy(c, launcher), 0);
  EXPECT_EQ(launcher.launches, 1);
  for (uint64_t counter : counters) EXPECT_EQ(counter, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Dtypes, DeviceKernelsOnHost,
    ::testing::Values(ncclInt8, ncclUint8, ncclInt32, ncclUint32, ncclInt64,
                      ncclUint64, ncclFloat16, ncclFloat32, ncclFloat64,
                      ncclBfloat16, ncclFloat8e4m3, ncclFloat8e5m2),
    [](const ::testing::TestParamInfo<ncclDataType_t>& info) {
      return std::string(dtypeName(info.param));
    });

INSTANTIATE_TEST_SUITE_P(
    Modules, DeviceModuleTable,
    ::testing::Values(
        ModuleUnderTest{"cuda",
                        kCudaModulePath,
                        {"cudaMalloc", "cudaGetDeviceCount", "cudaLaunchKernel",
                         "cudaGetDriverEntryPointByVersion"}},
        ModuleUnderTest{
            "hip", kHipModulePath, {"hipMalloc", kHipKernelSymbol}}),
    [](const ::testing::TestParamInfo<ModuleUnderTest>& info) {
      return std::string(info.param.runtime);
    });

}  // namespace
}  // namespace hetccl
