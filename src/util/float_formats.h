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

// A narrow binary floating-point format: the unsigned type of its bit
// patterns, its exponent and mantissa widths, its exponent bias, and what the
// top of its range holds.
//   HasInf     the all-ones exponent holds +-inf (mantissa 0) and the NaNs, as
//              in IEEE; without it only the all-ones pattern is NaN and the
//              rest of the top exponent holds ordinary numbers (OCP "FN")
//   Saturates  finite magnitudes that round past the largest finite value
//              become it, not inf; +-inf saturates too where the format has
//              no inf, and stays +-inf where it has one.
template <typename BitsType, int ExpBits, int MantBits, int Bias, bool HasInf,
          bool Saturates>
struct NarrowFormat {
  static_assert(HasInf || Saturates, "a format without inf must saturate");
  using Bits = BitsType;
  static constexpr int kBits = 1 + ExpBits + MantBits;
  static constexpr int kMantBits = MantBits;
  static constexpr int kBias = Bias;
  static constexpr bool kKeepsInf = HasInf && Saturates;
  static constexpr uint32_t kSignBit = 1u << (kBits - 1);
  static constexpr uint32_t kAbsMask = kSignBit - 1;
  static constexpr uint32_t kMantMask = (1u << MantBits) - 1;
  // All-ones exponent, zero mantissa: +inf where the format has it.
  static constexpr uint32_t kTopExponent = kAbsMask & ~kMantMask;
  // The smallest magnitude encoding that is not a finite number.
  static constexpr uint32_t kFirstSpecial = HasInf ? kTopExponent : kAbsMask;
  // What a finite magnitude beyond the largest finite value becomes.
  static constexpr uint32_t kOverflow =
      Saturates ? kFirstSpecial - 1 : kTopExponent;
  // The quiet NaN without payload (its top mantissa bit set).
  static constexpr uint32_t kQuietNaN =
      HasInf ? kTopExponent | (1u << (MantBits - 1)) : kAbsMask;
};

using Fp16 = NarrowFormat<uint16_t, 5, 10, 15, true, false>;
using E4m3 = NarrowFormat<uint8_t, 4, 3, 7, false, true>;
using E5m2 = NarrowFormat<uint8_t, 5, 2, 15, true, true>;

// Narrow -> float, exact for every code.
template <class Format>
HETCCL_HOST_DEVICE inline float decode(typename Format::Bits code) {
  constexpr int kShift = 23 - Format::kMantBits;  // mantissa to float's place
  constexpr uint32_t kRebias = uint32_t(127 - Format::kBias) << 23;
  // Rebiased once more, the top exponent (inf, NaN) lands on float's.
  constexpr uint32_t kSpecialRebias =
      uint32_t(255 - 127 + Format::kBias -
               int(Format::kTopExponent >> Format::kMantBits))
      << 23;
  // The format's smallest normal value, as a float.
  constexpr uint32_t kMinNormalBits = kRebias + (1u << 23);
  const uint32_t sign = (code & Format::kSignBit) << (32 - Format::kBits);
  const uint32_t magnitude = code & Format::kAbsMask;
  // Normal numbers: move exponent and mantissa into place and rebias.
  const uint32_t normal = (magnitude << kShift) + kRebias;
  const uint32_t special = normal + kSpecialRebias;
  // Subnormals (and zero): build minNormal * (1 + m / 2^kMantBits) and
  // subtract minNormal, both normal floats, so the result is exact.
  const float subnormal = bitsAsFloat((magnitude << kShift) + kMinNormalBits) -
                          bitsAsFloat(kMinNormalBits);
  uint32_t bits = selectBits(magnitude < (1u << Format::kMantBits),
                             floatAsBits(subnormal), normal);
  bits = selectBits(magnitude >= Format::kFirstSpecial, special, bits);
  return bitsAsFloat(bits | sign);
}

// Float -> narrow, with the rounding and overflow rules of the file comment.
template <class Format>
HETCCL_HOST_DEVICE inline typename Format::Bits encode(float value) {
  const uint32_t bits = floatAsBits(value);
  const uint32_t sign = (bits >> (32 - Format::kBits)) & Format::kSignBit;
  const uint32_t absBits = bits & kFloatAbsMask;
  uint32_t magnitude =
      roundMagnitude<Format::kMantBits, Format::kBias>(absBits);
  magnitude =
      selectBits(magnitude > Format::kOverflow, Format::kOverflow, magnitude);
  if constexpr (Format::kKeepsInf) {
    magnitude =
        selectBits(absBits == kFloatInfBits, Format::kTopExponent, magnitude);
  }
  // NaN: quiet, with as much of the payload as fits.
  const uint32_t payload =
      (absBits >> (23 - Format::kMantBits)) & Format::kMantMask;
  magnitude = selectBits(absBits > kFloatInfBits, Format::kQuietNaN | payload,
                         magnitude);
  return typename Format::Bits(sign | magnitude);
}

}  // namespace float_formats_detail

// ---- fp16 (IEEE binary16) ----

HETCCL_HOST_DEVICE inline float halfBitsToFloat(uint16_t half) {
  return float_formats_detail::decode<float_formats_detail::Fp16>(half);
}

HETCCL_HOST_DEVICE inline uint16_t floatToHalfBits(float value) {
  return float_formats_detail::encode<float_formats_detail::Fp16>(value);
}

// ---- bfloat16 (the top half of a float) ----
// Not a NarrowFormat: its exponent range is float's, so plain integer
// rounding of the bit pattern suffices, and float subnormals map to bf16
// subnormals (the subnormal addition of roundMagnitude would see them, and
// would be at the mercy of denormal flushing).

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
  return float_formats_detail::decode<float_formats_detail::E4m3>(e4m3);
}

HETCCL_HOST_DEVICE inline uint8_t floatToE4m3Bits(float value) {
  return float_formats_detail::encode<float_formats_detail::E4m3>(value);
}

// ---- fp8 E5M2 (bias 15, IEEE-like with inf and NaN) ----

HETCCL_HOST_DEVICE inline float e5m2BitsToFloat(uint8_t e5m2) {
  return float_formats_detail::decode<float_formats_detail::E5m2>(e5m2);
}

HETCCL_HOST_DEVICE inline uint8_t floatToE5m2Bits(float value) {
  return float_formats_detail::encode<float_formats_detail::E5m2>(value);
}

}  // namespace hetccl
