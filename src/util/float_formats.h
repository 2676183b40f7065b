// Bit-exact conversions between float and the narrow floating-point formats
// that collectives carry: IEEE binary16 (fp16), bfloat16, and the two OCP
// 8-bit formats E4M3 (the "FN" variant) and E5M2. Values travel as their bit
// patterns (uint16_t / uint8_t) so that no compiler's half or fp8 type is
// needed; the same header serves host code and CUDA/HIP device code.
//
// Formats (sign, exponent, mantissa bits; bias; largest finite value):
//   fp16  1-5-10  bias 15   65504     inf 0x7C00, NaN 0x7C01..0x7FFF
//   bf16  1-8-7   bias 127  ~3.39e38  inf 0x7F80, NaN 0x7F81..0x7FFF
//   e4m3  1-4-3   bias 7    448       no inf,     NaN 0x7F (and 0xFF)
//   e5m2  1-5-2   bias 15   57344     inf 0x7C,   NaN 0x7D..0x7F
//
// Narrow -> float is exact for every bit pattern (NaN payloads move to the
// top of the float mantissa; signs are kept, including -0).
//
// Float -> narrow:
// - Rounds to nearest, ties to even; subnormal results are rounded exactly.
// - NaN stays NaN, with its sign and as much of its payload as fits; the
//   result is always a quiet NaN.
// - fp16, bf16: magnitudes that round past the largest finite value become
//   +-inf (IEEE behaviour).
// - e4m3 has no infinity: finite magnitudes beyond 448 and +-inf saturate to
//   +-448. This matches CUDA's default __nv_fp8_e4m3 conversion
//   (__NV_SATFINITE) and avoids turning an overflow into NaN.
// - e5m2: finite magnitudes beyond 57344 saturate to +-57344 (again CUDA's
//   default, saturate-finite), but +-inf stays +-inf: an overflow that already
//   happened upstream stays visible instead of becoming a plausible number.
//
// Rounding to a subnormal result uses one float addition, so it assumes the
// default round-to-nearest mode. Nothing depends on denormal flushing
// (FTZ/DAZ): that addition, and the subtraction that decodes narrow
// subnormals, only ever see and produce normal floats, and every float
// input small enough to be flushed rounds to zero anyway.
//
// Every function is branch-free straight-line code (selects are bit masks),
// so loops over arrays vectorise on the host and do not diverge on GPUs.
#pragma once

#include <stdint.h>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define HETCCL_HOST_DEVICE __host__ __device__
#else
#define HETCCL_HOST_DEVICE
#endif

namespace hetccl {
namespace float_formats_detail {

HETCCL_HOST_DEVICE inline uint32_t floatAsBits(float value) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(value);
#else
  uint32_t bits;
  __builtin_memcpy(&bits, &value, sizeof(bits));
  return bits;
#endif
}

HETCCL_HOST_DEVICE inline float bitsAsFloat(uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float value;
  __builtin_memcpy(&value, &bits, sizeof(value));
  return value;
#endif
}

// `condition ? ifTrue : ifFalse` written with bit masks: both sides are
// always computed, so the compiler keeps straight-line code, which
// vectorises on the host and avoids divergence on GPUs.
HETCCL_HOST_DEVICE constexpr uint32_t selectBits(bool condition,
                                                 uint32_t ifTrue,
                                                 uint32_t ifFalse) {
  return ifFalse ^ ((ifTrue ^ ifFalse) & (0u - uint32_t(condition)));
}

constexpr uint32_t kFloatAbsMask = 0x7fffffffu;
constexpr uint32_t kFloatInfBits = 0x7f800000u;

// Rounds the magnitude `absBits` (a float's bits without the sign; finite)
// to a format with kMant mantissa bits and exponent bias kBias, to nearest
// even. Returns the format's magnitude encoding, which may exceed its largest
// finite encoding: the caller decides what overflow means.
template <int kMant, int kBias>
HETCCL_HOST_DEVICE inline uint32_t roundMagnitude(uint32_t absBits) {
  constexpr uint32_t kDropped = 23 - kMant;
  constexpr uint32_t kMinNormalBits = uint32_t(127 - kBias + 1) << 23;
  // Normal result: drop the low mantissa bits with round-to-nearest-even;
  // a carry out of the mantissa correctly bumps the exponent.
  const uint32_t roundedUp =
      absBits + ((1u << (kDropped - 1)) - 1) + ((absBits >> kDropped) & 1u);
  const uint32_t normal =
      (roundedUp >> kDropped) - (uint32_t(127 - kBias) << kMant);
  // Subnormal result: add a power of two whose float ulp equals the format's
  // subnormal step; the addition itself rounds to nearest even, and the low
  // bits of the sum are the subnormal encoding (2^kMant means "rounded up to
  // the smallest normal", which is also its correct encoding).
  constexpr uint32_t kMagicBits = uint32_t(127 + 24 - kBias - kMant) << 23;
  const uint32_t subnormal =
      floatAsBits(bitsAsFloat(absBits) + bitsAsFloat(kMagicBits)) - kMagicBits;
  return selectBits(absBits < kMinNormalBits, subnormal, normal);
}

}  // namespace float_formats_detail

// ---- fp16 (IEEE binary16) ----

HETCCL_HOST_DEVICE inline float halfBitsToFloat(uint16_t half) {
  using namespace float_formats_detail;
  const uint32_t sign = uint32_t(half & 0x8000u) << 16;
  const uint32_t magnitude = half & 0x7fffu;
  // Normal numbers: move exponent and mantissa into place and rebias
  // (15 -> 127). Inf/NaN need the top exponent: rebias once more.
  const uint32_t normal = (magnitude << 13) + (112u << 23);
  const uint32_t special = normal + (112u << 23);
  // Subnormals (and zero) are magnitude * 2^-24: build 2^-14 * (1 + m/1024)
  // and subtract 2^-14, both normal floats, so the result is exact.
  const float subnormal =
      bitsAsFloat((magnitude << 13) + (113u << 23)) - bitsAsFloat(113u << 23);
  uint32_t bits =
      selectBits(magnitude < 0x0400u, floatAsBits(subnormal), normal);
  bits = selectBits(magnitude >= 0x7c00u, special, bits);
  return bitsAsFloat(bits | sign);
}

HETCCL_HOST_DEVICE inline uint16_t floatToHalfBits(float value) {
  using namespace float_formats_detail;
  const uint32_t bits = floatAsBits(value);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t absBits = bits & kFloatAbsMask;
  uint32_t magnitude = roundMagnitude<10, 15>(absBits);
  magnitude = selectBits(magnitude > 0x7c00u, 0x7c00u, magnitude);  // -> inf
  magnitude = selectBits(absBits > kFloatInfBits,
                         0x7e00u | ((absBits >> 13) & 0x3ffu),  // quiet NaN
                         magnitude);
  return uint16_t(sign | magnitude);
}

// ---- bfloat16 (the top half of a float) ----

HETCCL_HOST_DEVICE inline float bf16BitsToFloat(uint16_t bf16) {
  return float_formats_detail::bitsAsFloat(uint32_t(bf16) << 16);
}

HETCCL_HOST_DEVICE inline uint16_t floatToBf16Bits(float value) {
  using namespace float_formats_detail;
  const uint32_t bits = floatAsBits(value);
  // Same exponent range as float: integer rounding of the bit pattern is
  // round-to-nearest-even for normals, subnormals and overflow to inf alike.
  const uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  const uint32_t quietNaN = (bits >> 16) | 0x0040u;
  return uint16_t(
      selectBits((bits & kFloatAbsMask) > kFloatInfBits, quietNaN, rounded));
}

// ---- fp8 E4M3 (OCP "FN": bias 7, no infinities, 0x7F/0xFF are NaN) ----

HETCCL_HOST_DEVICE inline float e4m3BitsToFloat(uint8_t e4m3) {
  using namespace float_formats_detail;
  const uint32_t sign = uint32_t(e4m3 & 0x80u) << 24;
  const uint32_t magnitude = e4m3 & 0x7fu;
  // Normal numbers: rebias the exponent (7 -> 127). The top exponent holds
  // ordinary numbers, except the all-ones pattern, the only NaN.
  const uint32_t normal = (magnitude << 20) + (120u << 23);
  // Subnormals (and zero) are magnitude * 2^-9: build 2^-6 * (1 + m/8) and
  // subtract 2^-6, both normal floats, so the result is exact.
  const float subnormal =
      bitsAsFloat((magnitude << 20) + (121u << 23)) - bitsAsFloat(121u << 23);
  uint32_t bits = selectBits(magnitude < 0x08u, floatAsBits(subnormal), normal);
  bits = selectBits(magnitude == 0x7fu, 0x7ff00000u, bits);  // quiet NaN
  return bitsAsFloat(bits | sign);
}

HETCCL_HOST_DEVICE inline uint8_t floatToE4m3Bits(float value) {
  using namespace float_formats_detail;
  const uint32_t bits = floatAsBits(value);
  const uint32_t sign = (bits >> 24) & 0x80u;
  const uint32_t absBits = bits & kFloatAbsMask;
  uint32_t magnitude = roundMagnitude<3, 7>(absBits);
  magnitude = selectBits(magnitude > 0x7eu, 0x7eu, magnitude);  // saturate
  magnitude = selectBits(absBits > kFloatInfBits, 0x7fu, magnitude);  // NaN
  return uint8_t(sign | magnitude);
}

// ---- fp8 E5M2 (bias 15, IEEE-like with inf and NaN) ----

// E5M2 is fp16 with the low 8 mantissa bits cut off.
HETCCL_HOST_DEVICE inline float e5m2BitsToFloat(uint8_t e5m2) {
  return halfBitsToFloat(uint16_t(e5m2 << 8));
}

HETCCL_HOST_DEVICE inline uint8_t floatToE5m2Bits(float value) {
  using namespace float_formats_detail;
  const uint32_t bits = floatAsBits(value);
  const uint32_t sign = (bits >> 24) & 0x80u;
  const uint32_t absBits = bits & kFloatAbsMask;
  uint32_t magnitude = roundMagnitude<2, 15>(absBits);
  magnitude = selectBits(magnitude > 0x7bu, 0x7bu, magnitude);  // saturate
  magnitude = selectBits(absBits == kFloatInfBits, 0x7cu, magnitude);
  magnitude = selectBits(absBits > kFloatInfBits,
                         0x7eu | ((absBits >> 21) & 0x3u),  // quiet NaN
                         magnitude);
  return uint8_t(sign | magnitude);
}

}  // namespace hetccl
