// The host reduction engine is templated over the element format and the
// operator, and works block by block: with one or two sources each element
// is loaded, combined, rounded and stored in one pass; with more, a block is
// accumulated across the sources in a small local array (which stays in L1)
// and rounded and stored together with the last source. Blocks have
// compile-time lengths, so the inner loops have fixed trip counts and no
// aliasing questions, which is what lets GCC's -O2 vectoriser (cheap cost
// model) turn them into SIMD code. Every switch on dtype, op or flag happens
// once per call, never per element.
#include "runtime/host/host_reduce.h"

#include <cstring>
#include <type_traits>

#include "runtime/reduce_ops.h"
#include "util/dtype.h"
#include "util/error.h"
#include "util/float_formats.h"

// On x86-64 the engine picks, at run time, an F16C kernel for fp16 and
// AVX2 builds of the kernels for bf16 and fp8 where the CPU has them.
// Building with -DHETCCL_HOST_REDUCE_X86=0 leaves only the portable kernels
// (to test them on any machine).
#ifndef HETCCL_HOST_REDUCE_X86
#if defined(__x86_64__) && defined(__GNUC__)
#define HETCCL_HOST_REDUCE_X86 1
#else
#define HETCCL_HOST_REDUCE_X86 0
#endif
#endif
#if HETCCL_HOST_REDUCE_X86
#include <immintrin.h>
#endif

// The kernels' code must be inlined into each instruction-set variant that
// runs it, or the variants would call one shared default build.
#define HETCCL_KERNEL_INLINE inline __attribute__((always_inline))

namespace hetccl {
namespace {

// The formats and operators the device kernels use too.
using namespace reduce;

template <typename Format>
struct Params {
  using Acc = typename Format::Acc;
  bool scaled;
  Acc scale;
  bool divided;
  Divider<Acc> divider;
};

// ---- Block kernels ----

// Full blocks have a compile-time length (vectorised loops); only the last
// partial block runs a loop of run-time length.
constexpr size_t kBlockElems = 1024;

template <size_t kLen>
struct FixedLen {
  static constexpr size_t get() { return kLen; }
};

struct RuntimeLen {
  size_t len;
  size_t get() const { return len; }
};

// Runs `kernel.block` over `count` elements: full blocks with a compile-time
// length, so that their loops vectorise, then the last partial block.
template <typename K, typename Storage>
HETCCL_KERNEL_INLINE void runBlocks(const K& kernel, Storage* dst,
                                    const void* const* srcs, int nsrcs,
                                    size_t count) {
  size_t offset = 0;
  for (; count - offset >= kBlockElems; offset += kBlockElems)
    kernel.block(dst, srcs, nsrcs, offset, FixedLen<kBlockElems>{});
  if (offset < count)
    kernel.block(dst, srcs, nsrcs, offset, RuntimeLen{count - offset});
}

// One reduction, fully typed. Scaling and division are template flags so
// that the common plain sum carries no trace of them.
//
// dst may be the same buffer as a source: each loop that writes dst reads
// only element i of every buffer to write element i, so `ivdep` (no
// dependence between iterations) is true even then. Loops that only touch
// the block's accumulator use __restrict instead.
template <typename F, typename Op, bool kScaled, bool kDivided>
class Kernel {
 public:
  using Storage = typename F::Storage;
  using Acc = typename F::Acc;

  explicit Kernel(const Params<F>& params)
      : scale_(params.scale), divider_(params.divider) {}

  HETCCL_KERNEL_INLINE void run(Storage* dst, const void* const* srcs,
                                int nsrcs, size_t count) const {
    runBlocks(*this, dst, srcs, nsrcs, count);
  }

  // Sources are combined strictly in order: ((s0 op s1) op s2) ... op sN-1.
  template <typename Len>
  HETCCL_KERNEL_INLINE void block(Storage* dst, const void* const* srcs,
                                  int nsrcs, size_t offset, Len len) const {
    auto source = [&](int s) {
      return static_cast<const Storage*>(srcs[s]) + offset;
    };
    Storage* out = dst + offset;
    if (nsrcs == 1) return single(out, source(0), len);
    if (nsrcs == 2) return pair(out, source(0), source(1), len);
    alignas(64) Acc acc[kBlockElems];
    firstPair(acc, source(0), source(1), len);
    for (int s = 2; s < nsrcs - 1; ++s) accumulate(acc, source(s), len);
    last(out, acc, source(nsrcs - 1), len);
  }

 private:
  HETCCL_KERNEL_INLINE static Acc input(Storage value, Acc scale) {
    if constexpr (kScaled) return wrapMul(F::load(value), scale);
    return F::load(value);
  }

  HETCCL_KERNEL_INLINE static Storage output(Acc value,
                                             const Divider<Acc>& divider) {
    if constexpr (kDivided) return F::store(divider.apply(value));
    return F::store(value);
  }

  template <typename Len>
  HETCCL_KERNEL_INLINE void single(Storage* out, const Storage* src,
                                   Len len) const {
    const size_t n = len.get();
    const Acc scale = scale_;
    const Divider<Acc> divider = divider_;
#pragma GCC ivdep
    for (size_t i = 0; i < n; ++i)
      out[i] = output(input(src[i], scale), divider);
  }

  template <typename Len>
  HETCCL_KERNEL_INLINE void pair(Storage* out, const Storage* a,
                                 const Storage* b, Len len) const {
    const size_t n = len.get();
    const Acc scale = scale_;
    const Divider<Acc> divider = divider_;
#pragma GCC ivdep
    for (size_t i = 0; i < n; ++i)
      out[i] =
          output(Op::apply(input(a[i], scale), input(b[i], scale)), divider);
  }

  template <typename Len>
  HETCCL_KERNEL_INLINE void firstPair(Acc* __restrict acc,
                                      const Storage* __restrict a,
                                      const Storage* __restrict b,
                                      Len len) const {
    const size_t n = len.get();
    const Acc scale = scale_;
    for (size_t i = 0; i < n; ++i)
      acc[i] = Op::apply(input(a[i], scale), input(b[i], scale));
  }

  template <typename Len>
  HETCCL_KERNEL_INLINE void accumulate(Acc* __restrict acc,
                                       const Storage* __restrict src,
                                       Len len) const {
    const size_t n = len.get();
    const Acc scale = scale_;
    for (size_t i = 0; i < n; ++i)
      acc[i] = Op::apply(acc[i], input(src[i], scale));
  }

  template <typename Len>
  HETCCL_KERNEL_INLINE void last(Storage* out, const Acc* __restrict acc,
                                 const Storage* src, Len len) const {
    const size_t n = len.get();
    const Acc scale = scale_;
    const Divider<Acc> divider = divider_;
#pragma GCC ivdep
    for (size_t i = 0; i < n; ++i)
      out[i] = output(Op::apply(acc[i], input(src[i], scale)), divider);
  }

  Acc scale_;
  Divider<Acc> divider_;
};

#if HETCCL_HOST_REDUCE_X86
// ---- x86 instruction-set variants, chosen at run time ----

struct CpuFeatures {
  bool f16c;
  bool avx2;
};

const CpuFeatures& cpuFeatures() {
  static const CpuFeatures features = [] {
    __builtin_cpu_init();
    const bool avx = __builtin_cpu_supports("avx");
    return CpuFeatures{avx && __builtin_cpu_supports("f16c"),
                       avx && __builtin_cpu_supports("avx2")};
  }();
  return features;
}

// The same kernel compiled for AVX2: twice the vector width, and the
// byte/word widening and unsigned compares that SSE2 lacks. Same IEEE
// operations in the same order, so the same bits as the default build.
template <typename K, typename Storage>
__attribute__((target("avx2"))) void runWithAvx2(const K& kernel, Storage* dst,
                                                 const void* const* srcs,
                                                 int nsrcs, size_t count) {
  kernel.run(dst, srcs, nsrcs, count);
}

// Formats whose conversions are compute-bound under SSE2; the others run at
// memory bandwidth already.
template <typename F>
constexpr bool kAvx2Helps =
    std::is_same_v<F, Bf16Format> || std::is_same_v<F, E4m3Format> ||
    std::is_same_v<F, E5m2Format>;

// fp16 on x86: the F16C instructions convert 8 elements at a time and give
// the same bits as the portable conversions (IEEE round to nearest even,
// overflow to inf, quiet NaN keeping the top payload bits), several times
// faster. They need a separate function compiled for AVX+F16C, so this
// kernel stages each block: convert a source to floats, combine floats,
// convert the result back.
__attribute__((target("avx,f16c"))) void halvesToFloats(
    float* __restrict out, const uint16_t* __restrict in, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i halves =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(halves));
  }
  for (; i < n; ++i) out[i] = halfBitsToFloat(in[i]);
}

__attribute__((target("avx,f16c"))) void floatsToHalves(
    uint16_t* __restrict out, const float* __restrict in, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i halves =
        _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), halves);
  }
  for (; i < n; ++i) out[i] = floatToHalfBits(in[i]);
}

template <typename F, typename Op, bool kScaled, bool kDivided>
class F16cHalfKernel {
  static_assert(std::is_same_v<F, HalfFormat>, "fp16 only");

 public:
  explicit F16cHalfKernel(const Params<F>& params)
      : scale_(params.scale), divider_(params.divider) {}

  void run(uint16_t* dst, const void* const* srcs, int nsrcs,
           size_t count) const {
    runBlocks(*this, dst, srcs, nsrcs, count);
  }

  // Every source is read before dst is written: dst may be any source.
  template <typename Len>
  void block(uint16_t* dst, const void* const* srcs, int nsrcs, size_t offset,
             Len len) const {
    auto source = [&](int s) {
      return static_cast<const uint16_t*>(srcs[s]) + offset;
    };
    alignas(64) float acc[kBlockElems];
    alignas(64) float staged[kBlockElems];
    halvesToFloats(acc, source(0), len.get());
    if constexpr (kScaled) scale(acc, len);
    for (int s = 1; s < nsrcs; ++s) {
      halvesToFloats(staged, source(s), len.get());
      combine(acc, staged, len);
    }
    if constexpr (kDivided) divide(acc, len);
    floatsToHalves(dst + offset, acc, len.get());
  }

 private:
  template <typename Len>
  void scale(float* __restrict acc, Len len) const {
    const size_t n = len.get();
    const float factor = scale_;
    for (size_t i = 0; i < n; ++i) acc[i] *= factor;
  }

  template <typename Len>
  void combine(float* __restrict acc, const float* __restrict staged,
               Len len) const {
    const size_t n = len.get();
    const float factor = scale_;
    for (size_t i = 0; i < n; ++i) {
      const float value = kScaled ? staged[i] * factor : staged[i];
      acc[i] = Op::apply(acc[i], value);
    }
  }

  template <typename Len>
  void divide(float* __restrict acc, Len len) const {
    const size_t n = len.get();
    const Divider<float> divider = divider_;
    for (size_t i = 0; i < n; ++i) acc[i] = divider.apply(acc[i]);
  }

  float scale_;
  Divider<float> divider_;
};
#endif  // HETCCL_HOST_REDUCE_X86

// One hostReduce call's arguments, passed down the dispatch in one piece.
struct ReduceCall {
  void* dst;
  const void* const* srcs;
  int nsrcs;
  size_t count;
  const Reduction& r;
};

// Picks the kernel variant for the call's flags. `K` is Kernel, or a kernel
// with the same shape that uses special instructions for one format.
template <template <typename, typename, bool, bool> class K, typename F,
          typename Op>
void reduceWithOp(const ReduceCall& call, const Params<F>& params) {
  auto* out = static_cast<typename F::Storage*>(call.dst);
  auto run = [&](const auto& kernel) {
#if HETCCL_HOST_REDUCE_X86
    if constexpr (kAvx2Helps<F>) {
      if (cpuFeatures().avx2)
        return runWithAvx2(kernel, out, call.srcs, call.nsrcs, call.count);
    }
#endif
    kernel.run(out, call.srcs, call.nsrcs, call.count);
  };
  if (!params.scaled && !params.divided)
    return run(K<F, Op, false, false>(params));
  if constexpr (std::is_same_v<Op, SumOp>) {
    // PreMulSum and Avg are sums: each gets its own tuned kernel.
    if (!params.divided) return run(K<F, Op, true, false>(params));
    if (!params.scaled) return run(K<F, Op, false, true>(params));
  }
  // Rare combinations share one kernel (default build only) that always
  // scales and divides; a missing scale or divisor is replaced by 1, which
  // changes no value (x * 1 and x / 1 are exact in every type).
  Params<F> general = params;
  if (!params.scaled) general.scale = typename F::Acc(1);
  if (!params.divided) general.divider = Divider<typename F::Acc>(1);
  K<F, Op, true, true>(general).run(out, call.srcs, call.nsrcs, call.count);
}

template <typename F,
          template <typename, typename, bool, bool> class K = Kernel>
void reduceWithFormat(const ReduceCall& call) {
  typename F::Storage scaleBits{};
  const bool scaled = call.r.preScale != nullptr;
  if (scaled) std::memcpy(&scaleBits, call.r.preScale, sizeof(scaleBits));
  const Params<F> params{scaled, F::load(scaleBits), call.r.divisor.has_value(),
                         Divider<typename F::Acc>(call.r.divisor.value_or(1))};
  switch (call.r.op) {
    case ncclSum:
      return reduceWithOp<K, F, SumOp>(call, params);
    case ncclProd:
      return reduceWithOp<K, F, ProdOp>(call, params);
    case ncclMax:
      return reduceWithOp<K, F, MaxOp>(call, params);
    case ncclMin:
      return reduceWithOp<K, F, MinOp>(call, params);
    default:
      fail(ncclInvalidArgument,
           "hostReduce: op %d is not sum, prod, max or min (avg is sum with a "
           "divisor, premulsum is sum with a prescale)",
           int(call.r.op));
  }
}

void reduceHalf(const ReduceCall& call) {
#if HETCCL_HOST_REDUCE_X86
  if (cpuFeatures().f16c)
    return reduceWithFormat<HalfFormat, F16cHalfKernel>(call);
#endif
  reduceWithFormat<HalfFormat>(call);
}

void checkArguments(const ReduceCall& call) {
  HETCCL_CHECK_ARG(dtypeValid(call.r.dtype), "hostReduce: invalid dtype %d",
                   int(call.r.dtype));
  HETCCL_CHECK_ARG(call.nsrcs >= 1, "hostReduce: nsrcs is %d, needs at least 1",
                   call.nsrcs);
  HETCCL_CHECK_ARG(call.r.divisor != 0u, "hostReduce: divisor is 0");
  if (call.count == 0) return;
  HETCCL_CHECK_ARG(call.dst != nullptr && call.srcs != nullptr,
                   "hostReduce: null buffer for %zu elements", call.count);
  for (int s = 0; s < call.nsrcs; ++s) {
    HETCCL_CHECK_ARG(call.srcs[s] != nullptr, "hostReduce: source %d is null",
                     s);
  }
}

bool isBuiltinCombiner(ncclRedOp_t op) {
  return op == ncclSum || op == ncclProd || op == ncclMax || op == ncclMin;
}

}  // namespace

void hostReduce(void* dst, const void* const* srcs, int nsrcs, size_t count,
                const Reduction& r) {
  const ReduceCall call{dst, srcs, nsrcs, count, r};
  checkArguments(call);
  if (count == 0) return;
  // A single untouched source is a copy; copying bytes also keeps NaN
  // payloads that a decode/encode round trip would canonicalise.
  if (nsrcs == 1 && r.preScale == nullptr && !r.divisor &&
      isBuiltinCombiner(r.op)) {
    if (dst != srcs[0]) std::memcpy(dst, srcs[0], count * dtypeSize(r.dtype));
    return;
  }
  switch (r.dtype) {
    case ncclInt8:
      return reduceWithFormat<NativeFormat<int8_t>>(call);
    case ncclUint8:
      return reduceWithFormat<NativeFormat<uint8_t>>(call);
    case ncclInt32:
      return reduceWithFormat<NativeFormat<int32_t>>(call);
    case ncclUint32:
      return reduceWithFormat<NativeFormat<uint32_t>>(call);
    case ncclInt64:
      return reduceWithFormat<NativeFormat<int64_t>>(call);
    case ncclUint64:
      return reduceWithFormat<NativeFormat<uint64_t>>(call);
    case ncclFloat16:
      return reduceHalf(call);
    case ncclFloat32:
      return reduceWithFormat<NativeFormat<float>>(call);
    case ncclFloat64:
      return reduceWithFormat<NativeFormat<double>>(call);
    case ncclBfloat16:
      return reduceWithFormat<Bf16Format>(call);
    case ncclFloat8e4m3:
      return reduceWithFormat<E4m3Format>(call);
    case ncclFloat8e5m2:
      return reduceWithFormat<E5m2Format>(call);
    default:
      fail(ncclInvalidArgument, "hostReduce: invalid dtype %d", int(r.dtype));
  }
}

}  // namespace hetccl
