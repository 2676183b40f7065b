// The element formats and operators of every reduction, one source for the
// host collectives (runtime/host/host_reduce.cc) and the device kernels
// (runtime/device/device_kernels.h, compiled by nvcc and hipcc): sharing
// them is what makes a GPU reduce bit for bit as the CPU does. Everything
// here is straight-line code on one element, so that host loops vectorise
// and GPU threads do not diverge.
#pragma once

#include <stdint.h>

#include <type_traits>

#include "util/float_formats.h"

namespace hetccl {
namespace reduce {

// ---- Element formats: stored bits <-> accumulation type ----

template <typename T>
struct NativeFormat {
  using Storage = T;
  using Acc = T;
  HETCCL_HOST_DEVICE static Acc load(Storage value) { return value; }
  HETCCL_HOST_DEVICE static Storage store(Acc value) { return value; }
};

// The narrow floating-point formats are computed in float, converted by
// the functions of util/float_formats.h.
template <typename Bits, float (*kToFloat)(Bits), Bits (*kFromFloat)(float)>
struct NarrowFloatFormat {
  using Storage = Bits;
  using Acc = float;
  HETCCL_HOST_DEVICE static Acc load(Storage bits) { return kToFloat(bits); }
  HETCCL_HOST_DEVICE static Storage store(Acc value) {
    return kFromFloat(value);
  }
};

using HalfFormat =
    NarrowFloatFormat<uint16_t, halfBitsToFloat, floatToHalfBits>;
using Bf16Format =
    NarrowFloatFormat<uint16_t, bf16BitsToFloat, floatToBf16Bits>;
using E4m3Format = NarrowFloatFormat<uint8_t, e4m3BitsToFloat, floatToE4m3Bits>;
using E5m2Format = NarrowFloatFormat<uint8_t, e5m2BitsToFloat, floatToE5m2Bits>;

// ---- Arithmetic in the accumulation type ----

// Integers wrap around like two's complement; the arithmetic is done in the
// unsigned type so that signed overflow is never undefined behaviour.
template <typename T>
HETCCL_HOST_DEVICE inline T wrapAdd(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return T(U(a) + U(b));
  } else {
    return a + b;
  }
}

template <typename T>
HETCCL_HOST_DEVICE inline T wrapMul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return T(U(a) * U(b));
  } else {
    return a * b;
  }
}

struct SumOp {
  template <typename T>
  HETCCL_HOST_DEVICE static T apply(T a, T b) {
    return wrapAdd(a, b);
  }
};

struct ProdOp {
  template <typename T>
  HETCCL_HOST_DEVICE static T apply(T a, T b) {
    return wrapMul(a, b);
  }
};

// Max/Min propagate NaN: a NaN `a` survives the comparison (b > NaN is
// false), a NaN `b` is picked explicitly. Written as selects, not
// fmaxf/fminf (which drop NaNs and may order -0/+0 freely), so that they
// vectorise on the host.
struct MaxOp {
  template <typename T>
  HETCCL_HOST_DEVICE static T apply(T a, T b) {
    const T larger = b > a ? b : a;
    if constexpr (std::is_floating_point_v<T>) return b != b ? b : larger;
    return larger;
  }
};

struct MinOp {
  template <typename T>
  HETCCL_HOST_DEVICE static T apply(T a, T b) {
    const T smaller = b < a ? b : a;
    if constexpr (std::is_floating_point_v<T>) return b != b ? b : smaller;
    return smaller;
  }
};

// Division by the Avg divisor: true division for floating types (by the
// divisor converted once), C-style truncating division for integers.
template <typename T, bool kFloat = std::is_floating_point_v<T>>
class Divider;

template <typename T>
class Divider<T, true> {
 public:
  Divider() = default;
  explicit Divider(uint64_t divisor) : divisor_(T(divisor)) {}
  HETCCL_HOST_DEVICE T apply(T value) const { return value / divisor_; }

 private:
  T divisor_ = T(1);
};

template <typename T>
class Divider<T, false> {
 public:
  Divider() = default;
  explicit Divider(uint64_t divisor) : divisor_(divisor) {}

  HETCCL_HOST_DEVICE T apply(T value) const {
    if constexpr (std::is_unsigned_v<T>) {
      return T(uint64_t(value) / divisor_);
    } else {
      if (divisor_ <= uint64_t(INT64_MAX))
        return T(int64_t(value) / int64_t(divisor_));
      // A divisor of 2^63 or more: |value| <= 2^63, so the truncated
      // quotient is 0, except -2^63 / 2^63 = -1 (GPUs have no 128-bit
      // division to compute it directly).
      const bool minusOne =
          int64_t(value) == INT64_MIN && divisor_ == (uint64_t(1) << 63);
      return minusOne ? T(-1) : T(0);
    }
  }

 private:
  uint64_t divisor_ = 1;
};

}  // namespace reduce
}  // namespace hetccl
