// The reduction kernels of the device-runtime modules, one source for CUDA
// (nvcc) and HIP (hipcc), and the host-side dispatch that both modules call
// to launch them.
//
// The kernels compute bit for bit what the host collectives compute
// (runtime/host/host_reduce.cc): the same element formats and operators
// (runtime/reduce_ops.h, shared with it), the same operations in the same
// order (sources 0, 1, 2, ... combined left to right), one rounding at the
// end. Three things keep the GPU from taking liberties the host does not
// take, and must hold wherever this header is compiled:
// - no contraction of a*b+c into a fused multiply-add (nvcc -fmad=false,
//   hipcc -ffp-contract=off): PreMulSum would otherwise round once where
//   the host rounds twice;
// - IEEE division (nvcc's default -prec-div=true; HIP's default correctly
//   rounded fp32 division);
// - no flushing of subnormals (nvcc's default -ftz=false, HIP's default).
//
// Each launch is switched on dtype, op and flags once, on the host; the
// kernels carry the operator and the format as template parameters, and
// scaling and division as template flags, so the inner loops hold no
// per-element decisions beyond a uniform test of the source count.
#pragma once

// HETCCL_DEVICE_KERNELS_ON_HOST: a unit test runs the kernels' code on the
// CPU; it defines __device__ and __global__ away and provides threadIdx,
// blockIdx, blockDim and gridDim.
#if !defined(__CUDACC__) && !defined(__HIPCC__) && \
    !defined(HETCCL_DEVICE_KERNELS_ON_HOST)
#error "device_kernels.h is compiled by nvcc or hipcc only"
#endif

#include <stddef.h>
#include <stdint.h>

#include <type_traits>

#include "nccl.h"
#include "runtime/device/device_module.h"
#include "runtime/device/low_latency_lines.h"
#include "runtime/reduce_ops.h"

// Loops over sources and pack elements have fixed trip counts: unrolled,
// they keep every value in registers.
#if defined(__CUDACC__) || defined(__HIPCC__)
#define HETCCL_UNROLL _Pragma("unroll")
#else
#define HETCCL_UNROLL
#endif

// Between two polls of a wait: nothing on a GPU; on the CPU (the unit test
// runs each rank's grid in a thread), a yield, so that the rank waited for
// gets the core.
#if defined(HETCCL_DEVICE_KERNELS_ON_HOST)
#include <sched.h>
#define HETCCL_POLL_PAUSE() sched_yield()
#else
#define HETCCL_POLL_PAUSE()
#endif

namespace hetccl {
namespace device {

// ---- The kernel ----

// One pack is 16 bytes: the widest load a thread issues.
constexpr size_t kPackBytes = 16;

template <typename Storage>
struct alignas(kPackBytes) Pack {
  static constexpr int kElems = int(kPackBytes / sizeof(Storage));
  Storage elems[kElems];
};

// A launch's arguments, by value in the kernel's parameter space. The
// elements are split in three ranges, so that the middle one can be read
// and written in whole packs: [0, head) one element per thread step,
// `packs` packs after that, and the rest up to `count` one at a time again.
// When the buffers are not equally aligned, head is count and packs is 0.
template <typename F>
struct ReduceArgs {
  using Storage = typename F::Storage;
  using Acc = typename F::Acc;

  Storage* dst;
  const Storage* srcs[HETCCL_DEVICE_MAX_SOURCES];
  int nsrcs;
  size_t head;
  size_t packs;
  size_t count;
  Acc scale;
  reduce::Divider<Acc> divider;
};

// The per-element steps of one kernel variant.
template <typename F, typename Op, bool kScaled, bool kDivided>
struct Steps {
  using Storage = typename F::Storage;
  using Acc = typename F::Acc;

  HETCCL_HOST_DEVICE static Acc input(Storage value,
                                      const ReduceArgs<F>& args) {
    if constexpr (kScaled) return reduce::wrapMul(F::load(value), args.scale);
    return F::load(value);
  }

  HETCCL_HOST_DEVICE static Storage output(Acc value,
                                           const ReduceArgs<F>& args) {
    if constexpr (kDivided) return F::store(args.divider.apply(value));
    return F::store(value);
  }
};

template <typename F, typename Op, bool kScaled, bool kDivided>
__device__ inline void reduceElement(const ReduceArgs<F>& args, size_t i) {
  using S = Steps<F, Op, kScaled, kDivided>;
  typename F::Acc acc = S::input(args.srcs[0][i], args);
  HETCCL_UNROLL
  for (int s = 1; s < HETCCL_DEVICE_MAX_SOURCES; ++s) {
    if (s < args.nsrcs) acc = Op::apply(acc, S::input(args.srcs[s][i], args));
  }
  args.dst[i] = S::output(acc, args);
}

// The pack at element `i` (16-byte aligned in every buffer). All sources
// are loaded before any is combined, so that their loads are in flight
// together; dst is written after every source is read, which keeps
// in-place reductions (dst == a source) right.
template <typename F, typename Op, bool kScaled, bool kDivided>
__device__ inline void reducePack(const ReduceArgs<F>& args, size_t i) {
  using S = Steps<F, Op, kScaled, kDivided>;
  using P = Pack<typename F::Storage>;
  P in[HETCCL_DEVICE_MAX_SOURCES];
  HETCCL_UNROLL
  for (int s = 0; s < HETCCL_DEVICE_MAX_SOURCES; ++s) {
    if (s < args.nsrcs) in[s] = *reinterpret_cast<const P*>(args.srcs[s] + i);
  }
  typename F::Acc acc[P::kElems];
  HETCCL_UNROLL
  for (int e = 0; e < P::kElems; ++e) acc[e] = S::input(in[0].elems[e], args);
  HETCCL_UNROLL
  for (int s = 1; s < HETCCL_DEVICE_MAX_SOURCES; ++s) {
    if (s < args.nsrcs) {
      HETCCL_UNROLL
      for (int e = 0; e < P::kElems; ++e)
        acc[e] = Op::apply(acc[e], S::input(in[s].elems[e], args));
    }
  }
  P out;
  HETCCL_UNROLL
  for (int e = 0; e < P::kElems; ++e) out.elems[e] = S::output(acc[e], args);
  *reinterpret_cast<P*>(args.dst + i) = out;
}

// Grid-stride loops over the three ranges of ReduceArgs.
template <typename F, typename Op, bool kScaled, bool kDivided>
__global__ void reduceKernel(const ReduceArgs<F> args) {
  constexpr size_t kElems = Pack<typename F::Storage>::kElems;
  const size_t first = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = first; i < args.head; i += stride)
    reduceElement<F, Op, kScaled, kDivided>(args, i);
  for (size_t p = first; p < args.packs; p += stride)
    reducePack<F, Op, kScaled, kDivided>(args, args.head + p * kElems);
  for (size_t i = args.head + args.packs * kElems + first; i < args.count;
       i += stride)
    reduceElement<F, Op, kScaled, kDivided>(args, i);
}

// ---- The low-latency collectives (device_module.h) ----

template <typename F>
struct LowLatencyArgs {
  // dst: the output; srcs[0]: this rank's input; count: the collective's
  // count. The copying kinds see bytes (F = NativeFormat<uint8_t>).
  ReduceArgs<F> reduce;
  int kind;
  int root;
  uint64_t* areas[HETCCL_DEVICE_MAX_SOURCES];
  size_t halfLines;
  uint64_t* counts;
  const uint64_t* release;
  int rank;
  int nranks;

  __device__ size_t partBytes() const {
    return reduce.count * sizeof(typename F::Storage);
  }
  // A rank posts its whole input, but for a broadcast's other ranks, whose
  // input is no part of it: they post a token as unit 0 (postUnit).
  __device__ size_t postedBytes() const {
    return kind == hetcclLowLatencyReduceScatter ? nranks * partBytes()
                                                 : partBytes();
  }
  __device__ bool postsInput() const {
    return kind != hetcclLowLatencyBroadcast || rank == root;
  }
  __device__ volatile uint64_t* lines(int owner, uint64_t done) const {
    return areas[owner] + lowlatency::halfOf(done) * halfLines;
  }
};

// The 8 bytes of unit u of a buffer of `bytes` (zeros past its end). The
// buffer is aligned to its element size only.
__device__ inline uint64_t loadUnit(const void* buffer, size_t bytes,
                                    size_t u) {
  const unsigned char* from =
      static_cast<const unsigned char*>(buffer) + u * lowlatency::kUnitBytes;
  const size_t left = bytes - u * lowlatency::kUnitBytes;
  if (left >= 8 && uintptr_t(from) % 8 == 0)
    return *reinterpret_cast<const uint64_t*>(from);
  uint64_t value = 0;
  for (size_t i = 0; i < left && i < 8; ++i)
    value |= uint64_t(from[i]) << (8 * i);
  return value;
}

// Writes unit u of a buffer of `bytes` (nothing past its end).
__device__ inline void storeUnit(void* buffer, size_t bytes, size_t u,
                                 uint64_t value) {
  unsigned char* to =
      static_cast<unsigned char*>(buffer) + u * lowlatency::kUnitBytes;
  const size_t left = bytes - u * lowlatency::kUnitBytes;
  if (left >= 8 && uintptr_t(to) % 8 == 0) {
    *reinterpret_cast<uint64_t*>(to) = value;
    return;
  }
  for (size_t i = 0; i < left && i < 8; ++i)
    to[i] = (unsigned char)(value >> (8 * i));
}

// The two lines of a unit (16-byte aligned) in one access where the
// compiler offers one: a reader then needs a single round trip across the
// bus per poll. Each line carries its own flag, so a torn access is seen.
#if defined(__CUDA_ARCH__)
__device__ inline void loadLines(const volatile uint64_t* at, uint64_t* low,
                                 uint64_t* high) {
  asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];"
               : "=l"(*low), "=l"(*high)
               : "l"(at)
               : "memory");
}
__device__ inline void storeLines(volatile uint64_t* at, uint64_t low,
                                  uint64_t high) {
  asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(at), "l"(low),
               "l"(high)
               : "memory");
}
#else
__device__ inline void loadLines(const volatile uint64_t* at, uint64_t* low,
                                 uint64_t* high) {
  *low = at[0];
  *high = at[1];
}
__device__ inline void storeLines(volatile uint64_t* at, uint64_t low,
                                  uint64_t high) {
  at[0] = low;
  at[1] = high;
}
#endif

// This rank's unit u goes to its area: data and flag in each store.
template <typename F>
__device__ inline void postUnit(const LowLatencyArgs<F>& args, uint64_t done,
                                size_t u) {
  const uint64_t value =
      args.postsInput() ? loadUnit(args.reduce.srcs[0], args.postedBytes(), u)
                        : 0;
  const uint32_t flag = lowlatency::flagOf(done);
  storeLines(args.lines(args.rank, done) + 2 * u,
             lowlatency::makeLine(uint32_t(value), flag),
             lowlatency::makeLine(uint32_t(value >> 32), flag));
}

// Unit u of `owner`'s input: this rank's own from its buffer, another's
// once both its lines carry this operation's flag. False if the waits
// were released first.
template <typename F>
__device__ inline bool unitOf(const LowLatencyArgs<F>& args, int owner,
                              uint64_t done, size_t u, uint64_t* value) {
  if (owner == args.rank) {
    *value = loadUnit(args.reduce.srcs[0], args.postedBytes(), u);
    return true;
  }
  const volatile uint64_t* lines = args.lines(owner, done) + 2 * u;
  const uint32_t flag = lowlatency::flagOf(done);
  for (unsigned spins = 1;; ++spins) {
    uint64_t low, high;
    loadLines(lines, &low, &high);
    if (lowlatency::flagOfLine(low) == flag &&
        lowlatency::flagOfLine(high) == flag) {
      *value = uint64_t(lowlatency::dataOfLine(high)) << 32 |
               lowlatency::dataOfLine(low);
      return true;
    }
    // The release word is one more read across the bus: seldom.
    if (spins % 1024 == 0 &&
        *static_cast<const volatile uint64_t*>(args.release) != 0)
      return false;
    HETCCL_POLL_PAUSE();
  }
}

// All-reduce and reduce-scatter: the elements of posted unit u that this
// rank's output holds (all of them, or those of its part), every rank's
// reduced in rank order. False if the waits were released.
template <typename F, typename Op>
__device__ inline bool reduceUnit(const LowLatencyArgs<F>& args, uint64_t done,
                                  size_t u) {
  using S = Steps<F, Op, true, true>;
  using Storage = typename F::Storage;
  constexpr size_t kSize = sizeof(Storage);
  constexpr size_t kPerUnit = lowlatency::kUnitBytes / kSize;
  // Element indices of the posted buffer: the output's and the unit's.
  const size_t first = args.kind == hetcclLowLatencyReduceScatter
                           ? size_t(args.rank) * args.reduce.count
                           : 0;
  const size_t unitFirst = u * kPerUnit;
  const size_t begin = unitFirst > first ? unitFirst : first;
  const size_t outputEnd = first + args.reduce.count;
  const size_t end =
      unitFirst + kPerUnit < outputEnd ? unitFirst + kPerUnit : outputEnd;
  if (begin >= end) return true;
  uint64_t units[HETCCL_DEVICE_MAX_SOURCES] = {};
  for (int r = 0; r < args.nranks; ++r)
    if (!unitOf(args, r, done, u, &units[r])) return false;
  for (size_t e = begin; e < end; ++e) {
    const size_t offset = (e - unitFirst) * kSize;
    Storage value;
    __builtin_memcpy(&value, reinterpret_cast<const char*>(&units[0]) + offset,
                     kSize);
    typename F::Acc acc = S::input(value, args.reduce);
    for (int r = 1; r < args.nranks; ++r) {
      __builtin_memcpy(
          &value, reinterpret_cast<const char*>(&units[r]) + offset, kSize);
      acc = Op::apply(acc, S::input(value, args.reduce));
    }
    args.reduce.dst[e - first] = S::output(acc, args.reduce);
  }
  return true;
}

// All-gather and broadcast, on bytes: unit u of every rank's input to its
// part of the output, or of the root's input to the output.
__device__ inline bool copyUnit(
    const LowLatencyArgs<reduce::NativeFormat<uint8_t>>& args, uint64_t done,
    size_t u) {
  const size_t bytes = args.partBytes();
  uint64_t value = 0;
  if (args.kind == hetcclLowLatencyBroadcast) {
    if (args.rank == args.root && args.reduce.dst == args.reduce.srcs[0])
      return true;
    if (!unitOf(args, args.root, done, u, &value)) return false;
    storeUnit(args.reduce.dst, bytes, u, value);
    return true;
  }
  for (int r = 0; r < args.nranks; ++r) {
    if (!unitOf(args, r, done, u, &value)) return false;
    storeUnit(args.reduce.dst + r * bytes, bytes, u, value);
  }
  return true;
}

// Each thread posts its units, then finishes the same units, so that an
// output in place overwrites only input this thread has read.
//
// A rank writes a half of its area again two operations later. By then
// every other rank must be done reading it: so in every operation every
// rank posts unit 0 at least, and reads a unit of every other rank. A
// kernel that ends has then seen every other rank start the same
// operation, which it does only once its previous one (which read the
// half) is over. All-reduce, all-gather and reduce-scatter read a unit of
// every rank anyway; in a broadcast the ranks other than the root post a
// token, and the thread that has unit 0 waits for every rank's.
//
// The same reading makes the host's check of the calls (CallAgreement)
// hold without a wait here: a rank launches only after it posted its
// call, and the rank whose post completed the set launches only if the
// calls agree. A kernel that ends has seen every other rank's kernel, so
// the check passed; one whose calls disagree never ends (until abort).
template <typename F, typename Finish>
__device__ inline void runLowLatency(const LowLatencyArgs<F>& args,
                                     Finish finish) {
  const uint64_t done = args.counts[blockIdx.x];
  size_t first = 0, end = 0;
  lowlatency::unitsOfBlock(lowlatency::unitsOf(args.postedBytes()), blockIdx.x,
                           gridDim.x, &first, &end);
  const size_t posted = args.postsInput() ? end : (first == 0 ? 1 : 0);
  for (size_t u = first + threadIdx.x; u < posted; u += blockDim.x)
    postUnit(args, done, u);
  bool released = false;
  if (args.kind == hetcclLowLatencyBroadcast && first == 0 &&
      threadIdx.x == 0) {
    uint64_t token;
    for (int r = 0; r < args.nranks && !released; ++r)
      if (r != args.rank) released = !unitOf(args, r, done, 0, &token);
  }
  for (size_t u = first + threadIdx.x; u < end && !released; u += blockDim.x)
    released = !finish(done, u);
  __syncthreads();
  // The block's last thread: emulated threads run one after another.
  if (threadIdx.x == blockDim.x - 1) args.counts[blockIdx.x] = done + 1;
}

// Scale and divisor are always applied: a missing one is 1, exact in every
// type, and one kernel per format and operator is enough for small
// operations.
template <typename F, typename Op>
__global__ void lowLatencyReduceKernel(const LowLatencyArgs<F> args) {
  runLowLatency(args, [&](uint64_t done, size_t u) {
    return reduceUnit<F, Op>(args, done, u);
  });
}

__global__ void lowLatencyCopyKernel(
    const LowLatencyArgs<reduce::NativeFormat<uint8_t>> args) {
  runLowLatency(
      args, [&](uint64_t done, size_t u) { return copyUnit(args, done, u); });
}

// ---- The staged copy (device_module.h: hetcclDeviceStagedCopy) ----

// What orders a thread's accesses to host memory with the host's: a fence
// at system scope (on the CPU, a full fence).
#if defined(HETCCL_DEVICE_KERNELS_ON_HOST)
#define HETCCL_FENCE_SYSTEM() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#else
#define HETCCL_FENCE_SYSTEM() __threadfence_system()
#endif

// Packs each thread loads before it stores any: the loads of host memory
// are round trips across the bus, so a thread keeps several in flight.
constexpr unsigned kStagedPacksInFlight = 4;

__device__ inline bool wordReached(const uint64_t* word, uint64_t value) {
  return int64_t(*static_cast<const volatile uint64_t*>(word) - value) >= 0;
}

// Bytes [first, end) of the copy, one per thread in turn: the unaligned
// head and tail.
__device__ inline void copyStagedBytes(const hetcclDeviceStagedCopy& c,
                                       size_t first, size_t end) {
  const volatile unsigned char* from = static_cast<const unsigned char*>(c.src);
  volatile unsigned char* to = static_cast<unsigned char*>(c.dst);
  for (size_t i = first + threadIdx.x; i < end; i += blockDim.x)
    to[i] = from[i];
}

// The packs of 16 bytes from byte `first` on, both sides aligned there;
// returns where they end.
__device__ inline size_t copyStagedPacks(const hetcclDeviceStagedCopy& c,
                                         size_t first) {
  const size_t packs = (c.bytes - first) / kPackBytes;
  const size_t stride = size_t(blockDim.x) * kStagedPacksInFlight;
  const volatile uint64_t* from = reinterpret_cast<const volatile uint64_t*>(
      static_cast<const unsigned char*>(c.src) + first);
  volatile uint64_t* to = reinterpret_cast<volatile uint64_t*>(
      static_cast<unsigned char*>(c.dst) + first);
  for (size_t base = threadIdx.x; base < packs; base += stride) {
    uint64_t low[kStagedPacksInFlight], high[kStagedPacksInFlight];
    HETCCL_UNROLL
    for (unsigned k = 0; k < kStagedPacksInFlight; ++k) {
      const size_t p = base + size_t(k) * blockDim.x;
      if (p < packs) loadLines(from + 2 * p, &low[k], &high[k]);
    }
    HETCCL_UNROLL
    for (unsigned k = 0; k < kStagedPacksInFlight; ++k) {
      const size_t p = base + size_t(k) * blockDim.x;
      if (p < packs) storeLines(to + 2 * p, low[k], high[k]);
    }
  }
  return first + packs * kPackBytes;
}

// One block: its first thread waits, every thread copies its share and
// fences, and the last signals once the barrier says all have (emulated
// threads run one after another, so the last one runs last).
__global__ void stagedCopyKernel(const hetcclDeviceStagedCopy c) {
  if (threadIdx.x == 0 && c.waitWord != nullptr)
    while (!wordReached(c.waitWord, c.waitValue)) HETCCL_POLL_PAUSE();
  __syncthreads();
  HETCCL_FENCE_SYSTEM();
  const size_t misalignment = uintptr_t(c.src) % kPackBytes;
  size_t copied = 0;
  if (misalignment == uintptr_t(c.dst) % kPackBytes) {
    const size_t head = misalignment == 0 ? 0 : kPackBytes - misalignment;
    copied = head < c.bytes ? head : c.bytes;
    copyStagedBytes(c, 0, copied);
    copied = copyStagedPacks(c, copied);
  }
  copyStagedBytes(c, copied, c.bytes);
  HETCCL_FENCE_SYSTEM();
  __syncthreads();
  if (threadIdx.x == blockDim.x - 1 && c.signalWord != nullptr)
    *static_cast<volatile uint64_t*>(c.signalWord) = c.signalValue;
}

// ---- Host-side dispatch ----

// Threads per block, and the most blocks one launch uses: enough to fill
// the largest GPUs (132 SMs x 8 blocks on an H100/H200) about twice; larger
// counts loop inside the kernel.
constexpr unsigned kThreadsPerBlock = 256;
constexpr size_t kMaxBlocks = 2048;

struct LaunchShape {
  unsigned blocks;
  unsigned threads;
};

inline size_t elementSize(int dtype) {
  switch (dtype) {
    case ncclInt8:
    case ncclUint8:
    case ncclFloat8e4m3:
    case ncclFloat8e5m2:
      return 1;
    case ncclFloat16:
    case ncclBfloat16:
      return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32:
      return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64:
      return 8;
    default:
      return 0;
  }
}

// Whether the launch can run at all: the module returns the runtime's
// "invalid value" code when not. Pointers must be aligned to their element
// size, as GPU loads require.
inline bool reductionValid(const hetcclDeviceReduction& r) {
  const size_t size = elementSize(r.dtype);
  if (size == 0) return false;
  if (r.op != ncclSum && r.op != ncclProd && r.op != ncclMax && r.op != ncclMin)
    return false;
  if (r.nsrcs < 1 || r.nsrcs > HETCCL_DEVICE_MAX_SOURCES) return false;
  if (r.applyDivisor && r.divisor == 0) return false;
  if (r.count == 0) return true;
  if (r.dst == nullptr || uintptr_t(r.dst) % size != 0) return false;
  for (int s = 0; s < r.nsrcs; ++s) {
    if (r.srcs[s] == nullptr || uintptr_t(r.srcs[s]) % size != 0) return false;
  }
  return true;
}

// Splits the elements into head, packs and rest (see ReduceArgs).
template <typename F>
void splitIntoPacks(ReduceArgs<F>& args, size_t count) {
  constexpr size_t kSize = sizeof(typename F::Storage);
  constexpr size_t kElems = Pack<typename F::Storage>::kElems;
  const uintptr_t misalignment = uintptr_t(args.dst) % kPackBytes;
  bool sameAlignment = true;
  for (int s = 0; s < args.nsrcs; ++s)
    sameAlignment &= uintptr_t(args.srcs[s]) % kPackBytes == misalignment;
  args.count = count;
  if (!sameAlignment) {
    args.head = count;
    args.packs = 0;
    return;
  }
  const size_t toBoundary = (kPackBytes - misalignment) % kPackBytes / kSize;
  args.head = toBoundary < count ? toBoundary : count;
  args.packs = (count - args.head) / kElems;
}

template <typename F>
LaunchShape launchShape(const ReduceArgs<F>& args) {
  constexpr size_t kElems = Pack<typename F::Storage>::kElems;
  const size_t rest = args.count - args.head - args.packs * kElems;
  size_t steps = args.head > args.packs ? args.head : args.packs;
  if (rest > steps) steps = rest;
  size_t blocks = (steps + kThreadsPerBlock - 1) / kThreadsPerBlock;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  return LaunchShape{unsigned(blocks), kThreadsPerBlock};
}

template <typename F, typename Op, bool kScaled, bool kDivided,
          typename Launcher>
int launchVariant(const ReduceArgs<F>& args, Launcher& launcher) {
  return launcher.launch(&reduceKernel<F, Op, kScaled, kDivided>, args,
                         launchShape(args));
}

// Picks the kernel variant for the flags, as the host collectives do: plain
// kernels for every operator, tuned ones for PreMulSum and Avg (sums), and
// one general kernel for rare combinations, with a missing scale or divisor
// replaced by 1 (exact in every type).
template <typename F, typename Op, typename Launcher>
int launchWithOp(const hetcclDeviceReduction& r, ReduceArgs<F> args,
                 Launcher& launcher) {
  const bool scaled = r.applyPreScale != 0;
  const bool divided = r.applyDivisor != 0;
  if (!scaled && !divided)
    return launchVariant<F, Op, false, false>(args, launcher);
  if constexpr (std::is_same_v<Op, reduce::SumOp>) {
    if (!divided) return launchVariant<F, Op, true, false>(args, launcher);
    if (!scaled) return launchVariant<F, Op, false, true>(args, launcher);
  }
  if (!scaled) args.scale = typename F::Acc(1);
  if (!divided) args.divider = reduce::Divider<typename F::Acc>(1);
  return launchVariant<F, Op, true, true>(args, launcher);
}

template <typename T>
struct Tag {
  using type = T;
};

// visit(Tag<F>{}) for the element format F of `dtype` (a valid one).
template <typename Visit>
int withFormat(int dtype, Visit&& visit) {
  switch (dtype) {
    case ncclInt8:
      return visit(Tag<reduce::NativeFormat<int8_t>>{});
    case ncclUint8:
      return visit(Tag<reduce::NativeFormat<uint8_t>>{});
    case ncclInt32:
      return visit(Tag<reduce::NativeFormat<int32_t>>{});
    case ncclUint32:
      return visit(Tag<reduce::NativeFormat<uint32_t>>{});
    case ncclInt64:
      return visit(Tag<reduce::NativeFormat<int64_t>>{});
    case ncclUint64:
      return visit(Tag<reduce::NativeFormat<uint64_t>>{});
    case ncclFloat16:
      return visit(Tag<reduce::HalfFormat>{});
    case ncclFloat32:
      return visit(Tag<reduce::NativeFormat<float>>{});
    case ncclFloat64:
      return visit(Tag<reduce::NativeFormat<double>>{});
    case ncclBfloat16:
      return visit(Tag<reduce::Bf16Format>{});
    case ncclFloat8e4m3:
      return visit(Tag<reduce::E4m3Format>{});
    default:
      return visit(Tag<reduce::E5m2Format>{});
  }
}

// visit(Tag<Op>{}) for the operator of `op` (a valid one).
template <typename Visit>
int withOperator(int op, Visit&& visit) {
  switch (op) {
    case ncclSum:
      return visit(Tag<reduce::SumOp>{});
    case ncclProd:
      return visit(Tag<reduce::ProdOp>{});
    case ncclMax:
      return visit(Tag<reduce::MaxOp>{});
    default:
      return visit(Tag<reduce::MinOp>{});
  }
}

// The kernels' view of `r`, but for the split into packs.
template <typename F>
ReduceArgs<F> reduceArgsOf(const hetcclDeviceReduction& r) {
  using Storage = typename F::Storage;
  ReduceArgs<F> args{};
  args.dst = static_cast<Storage*>(r.dst);
  args.nsrcs = r.nsrcs;
  for (int s = 0; s < r.nsrcs; ++s)
    args.srcs[s] = static_cast<const Storage*>(r.srcs[s]);
  // preScale holds one element in its low bytes; hosts are little-endian.
  Storage scaleBits{};
  __builtin_memcpy(&scaleBits, &r.preScale, sizeof(scaleBits));
  args.scale = F::load(scaleBits);
  args.divider =
      reduce::Divider<typename F::Acc>(r.applyDivisor ? r.divisor : 1);
  args.count = r.count;
  return args;
}

// Enqueues `r` through `launcher`, which provides:
//   int launch(void (*kernel)(Args), const Args& args,
//              LaunchShape shape);          // the runtime's launch
//   int copy(void* dst, const void* src, size_t bytes);  // async, any kind
//   int invalidValue() const;               // the runtime's error code
// Returns 0 or the runtime's error code. A single source without scale or
// divisor is a copy of bytes, as on the host (NaN payloads stay as they
// are).
template <typename Launcher>
int enqueueReduction(const hetcclDeviceReduction& r, Launcher& launcher) {
  if (!reductionValid(r)) return launcher.invalidValue();
  if (r.count == 0) return 0;
  if (r.nsrcs == 1 && !r.applyPreScale && !r.applyDivisor) {
    if (r.dst == r.srcs[0]) return 0;
    return launcher.copy(r.dst, r.srcs[0], r.count * elementSize(r.dtype));
  }
  return withFormat(r.dtype, [&](auto format) {
    using F = typename decltype(format)::type;
    ReduceArgs<F> args = reduceArgsOf<F>(r);
    splitIntoPacks(args, r.count);
    return withOperator(r.op, [&](auto op) {
      return launchWithOp<F, typename decltype(op)::type>(r, args, launcher);
    });
  });
}

inline bool lowLatencyValid(const hetcclDeviceLowLatencyCollective& c) {
  if (c.nranks < 2 || c.nranks > HETCCL_DEVICE_MAX_SOURCES) return false;
  if (c.rank < 0 || c.rank >= c.nranks || c.root < 0 || c.root >= c.nranks)
    return false;
  const hetcclDeviceReduction& r = c.reduction;
  const size_t size = elementSize(r.dtype);
  if (size == 0 || r.nsrcs != 1) return false;
  switch (c.kind) {
    case hetcclLowLatencyAllReduce:
    case hetcclLowLatencyReduceScatter:
      if (!reductionValid(r)) return false;
      break;
    case hetcclLowLatencyAllGather:
    case hetcclLowLatencyBroadcast: {
      // A broadcast reads no input but the root's (NCCL's rule).
      const bool reads =
          c.kind == hetcclLowLatencyAllGather || c.rank == c.root;
      if (r.count > 0 && (r.dst == nullptr || (reads && r.srcs[0] == nullptr)))
        return false;
      break;
    }
    default:
      return false;
  }
  for (int rank = 0; rank < c.nranks; ++rank)
    if (c.areas[rank] == nullptr || uintptr_t(c.areas[rank]) % 16 != 0)
      return false;
  const size_t parts = c.kind == hetcclLowLatencyReduceScatter ? c.nranks : 1;
  return c.counts != nullptr && c.release != nullptr &&
         c.halfLines >= lowlatency::linesFor(parts * r.count * size);
}

// The kernels' view of `c`, with `reduce` as the view of its reduction.
template <typename F>
LowLatencyArgs<F> lowLatencyArgsOf(const hetcclDeviceLowLatencyCollective& c,
                                   const ReduceArgs<F>& reduce) {
  LowLatencyArgs<F> args{};
  args.reduce = reduce;
  args.kind = c.kind;
  args.root = c.root;
  for (int r = 0; r < c.nranks; ++r) args.areas[r] = c.areas[r];
  args.halfLines = c.halfLines;
  args.counts = c.counts;
  args.release = c.release;
  args.rank = c.rank;
  args.nranks = c.nranks;
  return args;
}

// Enqueues the low-latency collective `c` through `launcher` (as for
// enqueueReduction). Every launch has the same grid, whose blocks each
// keep their count of operations.
template <typename Launcher>
int enqueueLowLatencyCollective(const hetcclDeviceLowLatencyCollective& c,
                                Launcher& launcher) {
  if (!lowLatencyValid(c)) return launcher.invalidValue();
  if (c.reduction.count == 0) return 0;
  const LaunchShape shape{HETCCL_DEVICE_LL_BLOCKS, kThreadsPerBlock};
  if (c.kind == hetcclLowLatencyAllGather ||
      c.kind == hetcclLowLatencyBroadcast) {
    using Bytes = reduce::NativeFormat<uint8_t>;
    ReduceArgs<Bytes> bytes{};
    bytes.dst = static_cast<uint8_t*>(c.reduction.dst);
    bytes.srcs[0] = static_cast<const uint8_t*>(c.reduction.srcs[0]);
    bytes.nsrcs = 1;
    bytes.count = c.reduction.count * elementSize(c.reduction.dtype);
    return launcher.launch(&lowLatencyCopyKernel,
                           lowLatencyArgsOf<Bytes>(c, bytes), shape);
  }
  return withFormat(c.reduction.dtype, [&](auto format) {
    using F = typename decltype(format)::type;
    ReduceArgs<F> reduce = reduceArgsOf<F>(c.reduction);
    if (!c.reduction.applyPreScale) reduce.scale = typename F::Acc(1);
    const LowLatencyArgs<F> args = lowLatencyArgsOf<F>(c, reduce);
    return withOperator(c.reduction.op, [&](auto op) {
      return launcher.launch(
          &lowLatencyReduceKernel<F, typename decltype(op)::type>, args, shape);
    });
  });
}

// Enqueues the staged copy `c` through `launcher` (as for
// enqueueReduction), one block of one kernel however small.
template <typename Launcher>
int enqueueStagedCopy(const hetcclDeviceStagedCopy& c, Launcher& launcher) {
  if (c.bytes > 0 && (c.dst == nullptr || c.src == nullptr))
    return launcher.invalidValue();
  return launcher.launch(&stagedCopyKernel, c,
                         LaunchShape{1, kThreadsPerBlock});
}

// Runs enqueueReduction for one reduction of every dtype, operator and
// flag combination, and enqueueLowLatencyCollective for every dtype and
// operator and once for the copying kinds, and enqueueStagedCopy once,
// which between them pick every kernel: with a launcher
// that loads kernels instead of launching them, this loads them all. The
// addresses are never dereferenced.
template <typename Launcher>
int visitEveryKernel(Launcher& launcher) {
  const int dtypes[] = {ncclInt8,     ncclUint8,      ncclInt32,
                        ncclUint32,   ncclInt64,      ncclUint64,
                        ncclFloat16,  ncclFloat32,    ncclFloat64,
                        ncclBfloat16, ncclFloat8e4m3, ncclFloat8e5m2};
  const int ops[] = {ncclSum, ncclProd, ncclMax, ncclMin};
  for (int dtype : dtypes)
    for (int op : ops)
      for (int flags = 0; flags < 4; ++flags) {
        hetcclDeviceReduction r{};
        r.dst = reinterpret_cast<void*>(uintptr_t(kPackBytes) * 16);
        r.srcs[0] = r.srcs[1] = r.dst;
        r.nsrcs = 2;
        r.count = 1;
        r.dtype = dtype;
        r.op = op;
        r.applyPreScale = flags & 1;
        r.applyDivisor = (flags >> 1) & 1;
        r.divisor = 2;
        if (int error = enqueueReduction(r, launcher)) return error;
        if (flags != 0) continue;
        hetcclDeviceLowLatencyCollective c{};
        c.reduction = r;
        c.reduction.nsrcs = 1;
        c.nranks = 2;
        c.areas[0] = c.areas[1] = c.counts = static_cast<uint64_t*>(r.dst);
        c.release = c.counts;
        c.halfLines = lowlatency::linesFor(2 * elementSize(dtype));
        if (int error = enqueueLowLatencyCollective(c, launcher)) return error;
        // The copying kinds share one kernel: the first dtype loads it.
        c.kind = hetcclLowLatencyAllGather;
        if (dtype != dtypes[0] || op != ops[0]) continue;
        if (int error = enqueueLowLatencyCollective(c, launcher)) return error;
      }
  return enqueueStagedCopy(hetcclDeviceStagedCopy{}, launcher);
}

}  // namespace device
}  // namespace hetccl
