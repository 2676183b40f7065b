// The CPU reduction engine: every collective that reduces host buffers ends
// here. Elements are combined in a fixed order so that every rank that
// reduces the same inputs gets bitwise-identical results.
#pragma once

#include <cstddef>

#include "runtime/reduction.h"

namespace hetccl {

// dst[i] = srcs[0][i] (+) srcs[1][i] (+) ... (+) srcs[n-1][i], combined
// strictly in the order 0..n-1 so the result is deterministic.
//
// Accumulates in the dtype's accumulation type (fp16/bf16/fp8 -> float,
// float -> float, double -> double, integers -> their own type with
// two's-complement wrap-around) and rounds once at the end.
// A preScale multiplies each source element (in float for fp16/bf16/fp8, in
// the type itself otherwise) before combining; a divisor divides the
// combined result before rounding.
// Max/Min on floating types propagate NaN; fp16/bf16/fp8 compare as float.
//
// dst may be the same pointer as any source (in-place reduction); partially
// overlapping buffers are not supported. nsrcs >= 1; count may be 0.
// Throws hetccl::Error(ncclInvalidArgument) for an invalid dtype or op or a
// zero divisor.
void hostReduce(void* dst, const void* const* srcs, int nsrcs, size_t count,
                const Reduction& r);

}  // namespace hetccl
