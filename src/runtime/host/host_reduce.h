// The CPU reduction engine: every collective that reduces host buffers ends
// here. Elements are combined in a fixed order so that every rank that
// reduces the same inputs gets bitwise-identical results.
#pragma once

#include <cstddef>
#include <cstdint>

#include "nccl.h"

namespace hetccl {

// How to combine inputs. `op` is one of ncclSum, ncclProd, ncclMax, ncclMin
// (ncclAvg is expressed as ncclSum plus divisor; PreMulSum as ncclSum plus
// preScale).
struct Reduction {
  ncclDataType_t dtype;
  ncclRedOp_t op;  // ncclSum, ncclProd, ncclMax or ncclMin
  // PreMulSum: one element of dtype; every *input* is multiplied by it before
  // combining (only if applyPreScale).
  const void* preScale = nullptr;
  // Avg: the final result is divided by this (only if applyDivisor); integer
  // types use integer division (truncation toward zero, like C), floating
  // types true division.
  uint64_t divisor = 1;
};

// dst[i] = srcs[0][i] (+) srcs[1][i] (+) ... (+) srcs[n-1][i], combined
// strictly in the order 0..n-1 so the result is deterministic.
//
// Accumulates in the dtype's accumulation type (fp16/bf16/fp8 -> float,
// float -> float, double -> double, integers -> their own type with
// two's-complement wrap-around) and rounds once at the end.
// applyPreScale: multiply each source element by *preScale (in float for
// fp16/bf16/fp8, in the type itself otherwise) before combining.
// applyDivisor: divide the combined result by divisor before rounding.
// Max/Min on floating types propagate NaN; fp16/bf16/fp8 compare as float.
//
// dst may be the same pointer as any source (in-place reduction); partially
// overlapping buffers are not supported. nsrcs >= 1; count may be 0.
// Throws hetccl::Error(ncclInvalidArgument) for an invalid dtype or op, a
// missing preScale or a zero divisor.
void hostReduce(void* dst, const void* const* srcs, int nsrcs, size_t count,
                const Reduction& r, bool applyPreScale, bool applyDivisor);

// Convenience: dst = a (+) b.
void hostReduce2(void* dst, const void* a, const void* b, size_t count,
                 const Reduction& r, bool applyPreScale, bool applyDivisor);

// Divide in place by r.divisor (used when partial sums were combined
// elsewhere).
void hostApplyDivisor(void* data, size_t count, const Reduction& r);

}  // namespace hetccl
