// Checks the narrow float conversions against an independent reference:
// decoding is compared with a formula written with ldexp, and encoding with
// a nearest-value search over every finite value of the format.
#include "util/float_formats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace hetccl {
namespace {

// What a format does with magnitudes beyond its largest finite value.
enum class Overflow {
  kToInf,            // IEEE: round, and past the max it is inf (fp16, bf16)
  kSaturateAll,      // finite and inf -> max finite (e4m3)
  kSaturateKeepInf,  // finite -> max finite, inf stays inf (e5m2)
};

struct Format {
  std::string name;
  int totalBits;
  int expBits;
  int mantBits;
  int bias;
  bool hasInf;
  uint32_t maxFiniteCode;  // positive code of the largest finite value
  Overflow overflow;
  std::function<float(uint32_t)> decode;
  std::function<uint32_t(float)> encode;

  uint32_t signBit() const { return 1u << (totalBits - 1); }
  uint32_t numCodes() const { return 1u << totalBits; }
  uint32_t infCode() const { return ((1u << expBits) - 1) << mantBits; }
};

std::vector<Format> allFormats() {
  return {
      {"fp16", 16, 5, 10, 15, true, 0x7bff, Overflow::kToInf,
       [](uint32_t c) { return halfBitsToFloat(uint16_t(c)); },
       [](float v) { return uint32_t(floatToHalfBits(v)); }},
      {"bf16", 16, 8, 7, 127, true, 0x7f7f, Overflow::kToInf,
       [](uint32_t c) { return bf16BitsToFloat(uint16_t(c)); },
       [](float v) { return uint32_t(floatToBf16Bits(v)); }},
      {"e4m3", 8, 4, 3, 7, false, 0x7e, Overflow::kSaturateAll,
       [](uint32_t c) { return e4m3BitsToFloat(uint8_t(c)); },
       [](float v) { return uint32_t(floatToE4m3Bits(v)); }},
      {"e5m2", 8, 5, 2, 15, true, 0x7b, Overflow::kSaturateKeepInf,
       [](uint32_t c) { return e5m2BitsToFloat(uint8_t(c)); },
       [](float v) { return uint32_t(floatToE5m2Bits(v)); }},
  };
}

uint32_t floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float floatFromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// The value of a code from the format's definition. NaN for NaN codes.
double referenceDecode(const Format& f, uint32_t code) {
  const bool negative = (code & f.signBit()) != 0;
  const uint32_t exponent = (code >> f.mantBits) & ((1u << f.expBits) - 1);
  const uint32_t mantissa = code & ((1u << f.mantBits) - 1);
  const uint32_t maxExponent = (1u << f.expBits) - 1;
  double magnitude;
  if (f.hasInf && exponent == maxExponent) {
    magnitude = mantissa == 0 ? std::numeric_limits<double>::infinity()
                              : std::numeric_limits<double>::quiet_NaN();
  } else if (!f.hasInf && exponent == maxExponent &&
             mantissa == (1u << f.mantBits) - 1) {
    magnitude = std::numeric_limits<double>::quiet_NaN();
  } else if (exponent == 0) {
    magnitude = std::ldexp(double(mantissa), 1 - f.bias - f.mantBits);
  } else {
    magnitude = std::ldexp(double(mantissa + (1u << f.mantBits)),
                           int(exponent) - f.bias - f.mantBits);
  }
  return negative ? -magnitude : magnitude;
}

bool isNaNCode(const Format& f, uint32_t code) {
  return std::isnan(referenceDecode(f, code));
}

// Round-to-nearest-even by search over all non-negative finite values,
// then the format's overflow policy. NaN input is checked separately.
uint32_t referenceEncode(const Format& f, float value) {
  const uint32_t sign = std::signbit(value) ? f.signBit() : 0;
  const double magnitude = std::fabs(double(value));
  const double maxFinite = referenceDecode(f, f.maxFiniteCode);
  if (std::isinf(magnitude)) {
    return sign | (f.overflow == Overflow::kSaturateAll ? f.maxFiniteCode
                                                        : f.infCode());
  }
  if (magnitude > maxFinite) {
    if (f.overflow != Overflow::kToInf) return sign | f.maxFiniteCode;
    // The next value above max would be max + ulp; the tie goes to the
    // even code, which is inf.
    const double ulp = maxFinite - referenceDecode(f, f.maxFiniteCode - 1);
    return sign |
           (magnitude >= maxFinite + ulp / 2 ? f.infCode() : f.maxFiniteCode);
  }
  // Positive codes 0..maxFiniteCode are increasing in value.
  uint32_t low = 0, high = f.maxFiniteCode;
  while (high - low > 1) {
    const uint32_t mid = (low + high) / 2;
    (referenceDecode(f, mid) <= magnitude ? low : high) = mid;
  }
  if (referenceDecode(f, high) <= magnitude) low = high;
  if (low == f.maxFiniteCode) return sign | low;
  const double below = referenceDecode(f, low);
  const double above = referenceDecode(f, low + 1);
  uint32_t chosen;
  if (magnitude - below < above - magnitude) {
    chosen = low;
  } else if (magnitude - below > above - magnitude) {
    chosen = low + 1;
  } else {
    chosen = (low & 1) == 0 ? low : low + 1;
  }
  return sign | chosen;
}

std::string hex(uint32_t value) {
  char text[16];
  snprintf(text, sizeof(text), "0x%x", value);
  return text;
}

TEST(FloatFormats, DecodeMatchesDefinitionForEveryCode) {
  for (const Format& f : allFormats()) {
    for (uint32_t code = 0; code < f.numCodes(); ++code) {
      const float decoded = f.decode(code);
      const double expected = referenceDecode(f, code);
      if (std::isnan(expected)) {
        ASSERT_TRUE(std::isnan(decoded)) << f.name << " " << hex(code);
        ASSERT_EQ(std::signbit(decoded), (code & f.signBit()) != 0)
            << f.name << " " << hex(code);
      } else {
        ASSERT_EQ(double(decoded), expected) << f.name << " " << hex(code);
        ASSERT_EQ(std::signbit(decoded), std::signbit(expected))
            << f.name << " " << hex(code);
      }
    }
  }
}

TEST(FloatFormats, RoundTripEveryCode) {
  for (const Format& f : allFormats()) {
    for (uint32_t code = 0; code < f.numCodes(); ++code) {
      const uint32_t back = f.encode(f.decode(code));
      if (isNaNCode(f, code)) {
        EXPECT_TRUE(isNaNCode(f, back)) << f.name << " " << hex(code);
        EXPECT_EQ(back & f.signBit(), code & f.signBit()) << f.name;
      } else {
        ASSERT_EQ(back, code) << f.name;
      }
    }
  }
}

// For every pair of adjacent finite values (of both signs): the values
// themselves, the exact midpoint (a tie, which must go to the even code) and
// the floats just either side of it.
TEST(FloatFormats, RoundsToNearestEvenAtEveryMidpoint) {
  for (const Format& f : allFormats()) {
    int ties = 0;
    for (uint32_t code = 0; code < f.maxFiniteCode; ++code) {
      const double low = referenceDecode(f, code);
      const double high = referenceDecode(f, code + 1);
      const float mid = float((low + high) / 2);
      ASSERT_EQ(double(mid), (low + high) / 2) << "midpoint not exact";
      const uint32_t even = (code & 1) == 0 ? code : code + 1;
      for (uint32_t sign : {0u, f.signBit()}) {
        const float s = sign ? -1.0f : 1.0f;
        ASSERT_EQ(f.encode(s * float(low)), sign | code) << f.name;
        ASSERT_EQ(f.encode(s * mid), sign | even)
            << f.name << " tie between " << hex(code) << " and "
            << hex(code + 1);
        ASSERT_EQ(f.encode(s * std::nextafter(mid, 0.0f)), sign | code)
            << f.name << " below midpoint after " << hex(code);
        ASSERT_EQ(
            f.encode(s * std::nextafter(
                             mid, std::numeric_limits<float>::infinity())),
            sign | (code + 1))
            << f.name << " above midpoint after " << hex(code);
        ++ties;
      }
    }
    EXPECT_GT(ties, 200) << f.name;
  }
}

TEST(FloatFormats, MatchesReferenceOnRandomFloats) {
  std::mt19937 rng(12345);
  for (const Format& f : allFormats()) {
    for (int i = 0; i < 1000000; ++i) {
      const float value = floatFromBits(rng());
      const uint32_t code = f.encode(value);
      if (std::isnan(value)) {
        ASSERT_TRUE(isNaNCode(f, code)) << f.name << " " << value;
        ASSERT_EQ((code & f.signBit()) != 0, std::signbit(value)) << f.name;
      } else {
        ASSERT_EQ(code, referenceEncode(f, value))
            << f.name << " value " << value << " bits "
            << hex(floatBits(value));
      }
    }
  }
}

TEST(FloatFormats, KnownValues) {
  EXPECT_EQ(halfBitsToFloat(0x3c00), 1.0f);
  EXPECT_EQ(halfBitsToFloat(0xc000), -2.0f);
  EXPECT_EQ(halfBitsToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(halfBitsToFloat(0x3555), 0.333251953125f);
  EXPECT_EQ(floatToHalfBits(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalfBits(0.1f), 0x2e66);
  EXPECT_EQ(floatToHalfBits(-0.0f), 0x8000);

  EXPECT_EQ(bf16BitsToFloat(0x3f80), 1.0f);
  EXPECT_EQ(bf16BitsToFloat(0xc0a0), -5.0f);
  EXPECT_EQ(floatToBf16Bits(1.0f), 0x3f80);
  EXPECT_EQ(floatToBf16Bits(3.14159265f), 0x4049);

  EXPECT_EQ(e4m3BitsToFloat(0x7e), 448.0f);
  EXPECT_EQ(e4m3BitsToFloat(0x38), 1.0f);
  EXPECT_EQ(e4m3BitsToFloat(0x08), 0.015625f);  // smallest normal, 2^-6
  EXPECT_EQ(e4m3BitsToFloat(0xb8), -1.0f);
  EXPECT_EQ(floatToE4m3Bits(1.0f), 0x38);
  EXPECT_EQ(floatToE4m3Bits(-448.0f), 0xfe);

  EXPECT_EQ(e5m2BitsToFloat(0x7b), 57344.0f);
  EXPECT_EQ(e5m2BitsToFloat(0x3c), 1.0f);
  EXPECT_EQ(e5m2BitsToFloat(0x04), 0.00006103515625f);  // 2^-14
  EXPECT_EQ(floatToE5m2Bits(1.0f), 0x3c);
  EXPECT_EQ(floatToE5m2Bits(-57344.0f), 0xfb);
}

TEST(FloatFormats, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(floatToHalfBits(inf), 0x7c00);
  EXPECT_EQ(floatToHalfBits(-inf), 0xfc00);
  EXPECT_TRUE(std::isinf(halfBitsToFloat(0x7c00)));
  EXPECT_TRUE(std::isnan(halfBitsToFloat(0x7e00)));
  EXPECT_EQ(floatToHalfBits(nan) & 0x7e00, 0x7e00);  // quiet NaN
  EXPECT_EQ(floatToHalfBits(-nan) & 0x8000, 0x8000);

  EXPECT_EQ(floatToBf16Bits(inf), 0x7f80);
  EXPECT_EQ(floatToBf16Bits(-inf), 0xff80);
  EXPECT_TRUE(std::isnan(bf16BitsToFloat(floatToBf16Bits(nan))));
  // A NaN whose payload lives only in the low half must stay NaN.
  EXPECT_TRUE(
      std::isnan(bf16BitsToFloat(floatToBf16Bits(floatFromBits(0x7f800001)))));

  EXPECT_TRUE(std::isnan(e4m3BitsToFloat(0x7f)));
  EXPECT_TRUE(std::isnan(e4m3BitsToFloat(0xff)));
  EXPECT_EQ(floatToE4m3Bits(nan), 0x7f);
  EXPECT_EQ(floatToE4m3Bits(-nan), 0xff);

  EXPECT_TRUE(std::isinf(e5m2BitsToFloat(0x7c)));
  EXPECT_TRUE(std::isinf(e5m2BitsToFloat(0xfc)));
  for (uint32_t code : {0x7du, 0x7eu, 0x7fu, 0xfdu, 0xfeu, 0xffu})
    EXPECT_TRUE(std::isnan(e5m2BitsToFloat(uint8_t(code)))) << hex(code);
  EXPECT_TRUE(std::isnan(e5m2BitsToFloat(floatToE5m2Bits(nan))));
  EXPECT_TRUE(
      std::isnan(e5m2BitsToFloat(floatToE5m2Bits(floatFromBits(0x7f800001)))));
}

TEST(FloatFormats, OverflowAndSaturation) {
  const float inf = std::numeric_limits<float>::infinity();
  const float floatMax = std::numeric_limits<float>::max();
  // fp16: IEEE, overflow at the midpoint 65520 (a tie that goes to inf).
  EXPECT_EQ(floatToHalfBits(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalfBits(std::nextafter(65520.0f, 0.0f)), 0x7bff);
  EXPECT_EQ(floatToHalfBits(65520.0f), 0x7c00);
  EXPECT_EQ(floatToHalfBits(-1e6f), 0xfc00);
  EXPECT_EQ(floatToHalfBits(floatMax), 0x7c00);
  // bf16: same, at the float range's end.
  EXPECT_EQ(floatToBf16Bits(floatMax), 0x7f80);
  EXPECT_EQ(floatToBf16Bits(floatFromBits(0x7f7f7fff)), 0x7f7f);
  EXPECT_EQ(floatToBf16Bits(floatFromBits(0xff7f8000)), 0xff80);
  // e4m3: everything beyond 448 saturates, infinities included.
  EXPECT_EQ(floatToE4m3Bits(464.0f), 0x7e);  // would round to the NaN code
  EXPECT_EQ(floatToE4m3Bits(480.0f), 0x7e);
  EXPECT_EQ(floatToE4m3Bits(1e6f), 0x7e);
  EXPECT_EQ(floatToE4m3Bits(-floatMax), 0xfe);
  EXPECT_EQ(floatToE4m3Bits(inf), 0x7e);
  EXPECT_EQ(floatToE4m3Bits(-inf), 0xfe);
  // e5m2: finite values saturate, infinities stay.
  EXPECT_EQ(floatToE5m2Bits(61440.0f), 0x7b);  // the tie that IEEE sends to inf
  EXPECT_EQ(floatToE5m2Bits(1e6f), 0x7b);
  EXPECT_EQ(floatToE5m2Bits(-floatMax), 0xfb);
  EXPECT_EQ(floatToE5m2Bits(inf), 0x7c);
  EXPECT_EQ(floatToE5m2Bits(-inf), 0xfc);
}

TEST(FloatFormats, Subnormals) {
  const float tinyFloat = std::numeric_limits<float>::denorm_min();
  // fp16: subnormal step 2^-24.
  EXPECT_EQ(halfBitsToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(halfBitsToFloat(0x03ff), std::ldexp(1023.0f, -24));
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.0f, -25)), 0x0000);  // tie -> even
  EXPECT_EQ(floatToHalfBits(std::ldexp(3.0f, -25)), 0x0002);  // tie -> even
  EXPECT_EQ(floatToHalfBits(std::ldexp(3.0f, -26)), 0x0001);
  EXPECT_EQ(floatToHalfBits(std::ldexp(2047.0f, -25)), 0x0400);  // -> normal
  EXPECT_EQ(floatToHalfBits(tinyFloat), 0x0000);
  EXPECT_EQ(floatToHalfBits(-tinyFloat), 0x8000);
  // bf16 shares float's exponent range: float subnormals round to bf16 ones.
  EXPECT_EQ(bf16BitsToFloat(0x0001), std::ldexp(1.0f, -133));
  EXPECT_EQ(floatToBf16Bits(std::ldexp(1.0f, -133)), 0x0001);
  EXPECT_EQ(floatToBf16Bits(std::ldexp(3.0f, -134)), 0x0002);  // tie -> even
  EXPECT_EQ(floatToBf16Bits(tinyFloat), 0x0000);
  // e4m3: step 2^-9; e5m2: step 2^-16.
  EXPECT_EQ(e4m3BitsToFloat(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(e4m3BitsToFloat(0x07), std::ldexp(7.0f, -9));
  EXPECT_EQ(floatToE4m3Bits(std::ldexp(1.0f, -10)), 0x00);  // tie -> even
  EXPECT_EQ(floatToE4m3Bits(std::ldexp(3.0f, -11)), 0x01);
  EXPECT_EQ(floatToE4m3Bits(std::ldexp(15.0f, -10)), 0x08);  // -> normal
  EXPECT_EQ(e5m2BitsToFloat(0x01), std::ldexp(1.0f, -16));
  EXPECT_EQ(e5m2BitsToFloat(0x83), -std::ldexp(3.0f, -16));
  EXPECT_EQ(floatToE5m2Bits(std::ldexp(1.0f, -17)), 0x00);
  EXPECT_EQ(floatToE5m2Bits(-std::ldexp(3.0f, -17)), 0x82);  // tie -> even
}

}  // namespace
}  // namespace hetccl
