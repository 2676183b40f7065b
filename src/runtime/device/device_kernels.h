// The reduction kernels of the device-runtime modules, one source for CUDA
// (nvcc) and HIP (hipcc), and the host-side dispatch that both modules call
// to launch them.
//
// The kernels compute bit for bit what the host engine computes
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
#include "runtime/reduce_ops.h"

// Loops over sources and pack elements have fixed trip counts: unrolled,
// they keep every value in registers.
#if defined(__CUDACC__) || defined(__HIPCC__)
#define HETCCL_UNROLL _Pragma("unroll")
#else
#define HETCCL_UNROLL
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

// Picks the kernel variant for the flags, as the host engine does: plain
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

template <typename F, typename Launcher>
int launchWithFormat(const hetcclDeviceReduction& r, Launcher& launcher) {
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
  splitIntoPacks(args, r.count);
  switch (r.op) {
    case ncclSum:
      return launchWithOp<F, reduce::SumOp>(r, args, launcher);
    case ncclProd:
      return launchWithOp<F, reduce::ProdOp>(r, args, launcher);
    case ncclMax:
      return launchWithOp<F, reduce::MaxOp>(r, args, launcher);
    default:
      return launchWithOp<F, reduce::MinOp>(r, args, launcher);
  }
}

// Enqueues `r` through `launcher`, which provides:
//   int launch(void (*kernel)(ReduceArgs<F>), const ReduceArgs<F>& args,
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
  switch (r.dtype) {
    case ncclInt8:
      return launchWithFormat<reduce::NativeFormat<int8_t>>(r, launcher);
    case ncclUint8:
      return launchWithFormat<reduce::NativeFormat<uint8_t>>(r, launcher);
    case ncclInt32:
      return launchWithFormat<reduce::NativeFormat<int32_t>>(r, launcher);
    case ncclUint32:
      return launchWithFormat<reduce::NativeFormat<uint32_t>>(r, launcher);
    case ncclInt64:
      return launchWithFormat<reduce::NativeFormat<int64_t>>(r, launcher);
    case ncclUint64:
      return launchWithFormat<reduce::NativeFormat<uint64_t>>(r, launcher);
    case ncclFloat16:
      return launchWithFormat<reduce::HalfFormat>(r, launcher);
    case ncclFloat32:
      return launchWithFormat<reduce::NativeFormat<float>>(r, launcher);
    case ncclFloat64:
      return launchWithFormat<reduce::NativeFormat<double>>(r, launcher);
    case ncclBfloat16:
      return launchWithFormat<reduce::Bf16Format>(r, launcher);
    case ncclFloat8e4m3:
      return launchWithFormat<reduce::E4m3Format>(r, launcher);
    default:
      return launchWithFormat<reduce::E5m2Format>(r, launcher);
  }
}

// Runs enqueueReduction for one reduction of every dtype, operator and
// flag combination, which between them pick every kernel: with a launcher
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
      }
  return 0;
}

}  // namespace device
}  // namespace hetccl
