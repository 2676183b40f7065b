#include "kit/dtype.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace hetccl::kit {
namespace {

// A binary floating-point format narrower than float: half, bfloat16 and the
// two OCP fp8 formats differ only in these parameters.
struct SmallFloat {
  int exponentBits;
  int mantissaBits;
  int bias;
  // IEEE-style specials (all-ones exponent is Inf/NaN). E4M3 has no Inf and
  // only S.1111.111 is NaN.
  bool ieeeSpecials;
};

constexpr SmallFloat kHalf{5, 10, 15, true};
constexpr SmallFloat kBfloat16{8, 7, 127, true};
constexpr SmallFloat kE4M3{4, 3, 7, false};
constexpr SmallFloat kE5M2{5, 2, 15, true};

double decodeSmallFloat(const SmallFloat& f, uint32_t bits) {
  const uint32_t mantissaMask = (1u << f.mantissaBits) - 1;
  const uint32_t exponentMax = (1u << f.exponentBits) - 1;
  const bool negative = (bits >> (f.exponentBits + f.mantissaBits)) & 1;
  const uint32_t exponent = (bits >> f.mantissaBits) & exponentMax;
  const uint32_t mantissa = bits & mantissaMask;
  double magnitude;
  if (f.ieeeSpecials && exponent == exponentMax) {
    magnitude = mantissa ? std::numeric_limits<double>::quiet_NaN()
                         : std::numeric_limits<double>::infinity();
  } else if (!f.ieeeSpecials && exponent == exponentMax &&
             mantissa == mantissaMask) {
    magnitude = std::numeric_limits<double>::quiet_NaN();
  } else if (exponent == 0) {
    magnitude =
        std::ldexp(static_cast<double>(mantissa), 1 - f.bias - f.mantissaBits);
  } else {
    magnitude =
        std::ldexp(static_cast<double>(mantissa | (mantissaMask + 1)),
                   static_cast<int>(exponent) - f.bias - f.mantissaBits);
  }
  return negative ? -magnitude : magnitude;
}

uint32_t nanBits(const SmallFloat& f) {
  const uint32_t exponentAndMantissa =
      (1u << (f.exponentBits + f.mantissaBits)) - 1;
  if (!f.ieeeSpecials) return exponentAndMantissa;
  return exponentAndMantissa & ~((1u << (f.mantissaBits - 1)) - 1);
}

// What a value too large for the format becomes: Inf, or NaN for E4M3.
uint32_t overflowBits(const SmallFloat& f) {
  if (!f.ieeeSpecials) return nanBits(f);
  return ((1u << f.exponentBits) - 1) << f.mantissaBits;
}

// Round-to-nearest-even; out-of-range values become Inf (NaN for E4M3,
// which has no Inf).
uint32_t encodeSmallFloat(const SmallFloat& f, double value) {
  if (std::isnan(value)) return nanBits(f);
  const uint32_t signBit =
      std::signbit(value) ? 1u << (f.exponentBits + f.mantissaBits) : 0u;
  const double magnitude = std::fabs(value);
  if (magnitude == 0) return signBit;
  if (std::isinf(magnitude)) return signBit | overflowBits(f);
  int frexpExponent;
  std::frexp(magnitude, &frexpExponent);
  int exponent = std::max(frexpExponent - 1, 1 - f.bias);
  // The value in units of the last mantissa place at this exponent.
  const double units =
      std::nearbyint(std::ldexp(magnitude, f.mantissaBits - exponent));
  uint64_t significand = static_cast<uint64_t>(units);
  const uint64_t implicitOne = 1ull << f.mantissaBits;
  if (significand >= 2 * implicitOne) {  // rounding carried into a new binade
    significand /= 2;
    ++exponent;
  }
  const bool normal = significand >= implicitOne;
  const int64_t biased = normal ? exponent + f.bias : 0;
  const int64_t exponentMax = (1 << f.exponentBits) - 1;
  const uint32_t mantissa =
      static_cast<uint32_t>(significand & (implicitOne - 1));
  const bool overflow =
      f.ieeeSpecials ? biased >= exponentMax
                     : biased > exponentMax || (biased == exponentMax &&
                                                mantissa == implicitOne - 1);
  if (overflow) return signBit | overflowBits(f);
  return signBit | static_cast<uint32_t>(biased) << f.mantissaBits | mantissa;
}

template <typename T>
void storeInteger(double value, void* dst) {
  T stored;
  if (std::isnan(value)) {
    stored = std::numeric_limits<T>::max();
  } else if (value < 0) {
    stored = static_cast<T>(static_cast<int64_t>(value));
  } else {
    stored = static_cast<T>(static_cast<uint64_t>(value));
  }
  std::memcpy(dst, &stored, sizeof(T));
}

template <typename T>
double loadScalar(const void* src) {
  T loaded;
  std::memcpy(&loaded, src, sizeof(T));
  return static_cast<double>(loaded);
}

template <typename Bits>
void storeBits(uint32_t bits, void* dst) {
  Bits narrowed = static_cast<Bits>(bits);
  std::memcpy(dst, &narrowed, sizeof(Bits));
}

template <typename Bits>
uint32_t loadBits(const void* src) {
  Bits loaded;
  std::memcpy(&loaded, src, sizeof(Bits));
  return loaded;
}

DataType floatType(ncclDataType_t nccl, const char* name, const SmallFloat& f,
                   size_t size) {
  const int maxExponent =
      (1 << f.exponentBits) - 1 - f.bias - (f.ieeeSpecials ? 1 : 0);
  return DataType{nccl,
                  name,
                  size,
                  true,
                  true,
                  int64_t{1} << (f.mantissaBits + 1),
                  maxExponent,
                  std::ldexp(1.0, -(f.mantissaBits + 1)),
                  std::ldexp(1.0, 1 - f.bias - f.mantissaBits)};
}

DataType intType(ncclDataType_t nccl, const char* name, size_t size,
                 bool isSigned) {
  const int valueBits = static_cast<int>(size * 8) - (isSigned ? 1 : 0);
  // Capped so that values stay exact as doubles.
  const int limitBits = std::min(valueBits, 52);
  return DataType{nccl,
                  name,
                  size,
                  false,
                  isSigned,
                  (int64_t{1} << limitBits) - (limitBits == valueBits ? 1 : 0),
                  std::min(valueBits - 1, 52),
                  0.0,
                  0.0};
}

std::vector<DataType> makeDataTypes() {
  return {
      intType(ncclInt8, "int8", 1, true),
      intType(ncclUint8, "uint8", 1, false),
      intType(ncclInt32, "int32", 4, true),
      intType(ncclUint32, "uint32", 4, false),
      intType(ncclInt64, "int64", 8, true),
      intType(ncclUint64, "uint64", 8, false),
      floatType(ncclFloat16, "float16", kHalf, 2),
      DataType{ncclFloat32, "float32", 4, true, true, int64_t{1} << 24, 127,
               std::ldexp(1.0, -24), std::ldexp(1.0, -149)},
      DataType{ncclFloat64, "float64", 8, true, true, int64_t{1} << 53, 1023,
               std::ldexp(1.0, -53), std::ldexp(1.0, -1074)},
      floatType(ncclBfloat16, "bfloat16", kBfloat16, 2),
      floatType(ncclFloat8e4m3, "fp8e4m3", kE4M3, 1),
      floatType(ncclFloat8e5m2, "fp8e5m2", kE5M2, 1),
  };
}

}  // namespace

const std::vector<DataType>& allDataTypes() {
  static const std::vector<DataType> types = makeDataTypes();
  return types;
}

const DataType* findDataType(std::string_view name) {
  static const std::pair<std::string_view, std::string_view> kAliases[] = {
      {"char", "int8"},      {"int", "int32"},    {"half", "float16"},
      {"fp16", "float16"},   {"f16", "float16"},  {"bf16", "bfloat16"},
      {"float", "float32"},  {"fp32", "float32"}, {"f32", "float32"},
      {"double", "float64"}, {"fp64", "float64"}, {"f64", "float64"},
      {"f8e4m3", "fp8e4m3"}, {"e4m3", "fp8e4m3"}, {"float8e4m3", "fp8e4m3"},
      {"f8e5m2", "fp8e5m2"}, {"e5m2", "fp8e5m2"}, {"float8e5m2", "fp8e5m2"},
  };
  std::string_view canonical = name;
  for (const auto& alias : kAliases) {
    if (name == alias.first) canonical = alias.second;
  }
  for (const DataType& type : allDataTypes()) {
    if (canonical == type.name) return &type;
  }
  return nullptr;
}

const DataType& dataTypeOf(ncclDataType_t nccl) {
  for (const DataType& type : allDataTypes()) {
    if (type.nccl == nccl) return type;
  }
  throw std::invalid_argument("not an NCCL data type: " +
                              std::to_string(static_cast<int>(nccl)));
}

void encodeValue(const DataType& type, double value, void* dst) {
  switch (type.nccl) {
    case ncclInt8:
      return storeInteger<int8_t>(value, dst);
    case ncclUint8:
      return storeInteger<uint8_t>(value, dst);
    case ncclInt32:
      return storeInteger<int32_t>(value, dst);
    case ncclUint32:
      return storeInteger<uint32_t>(value, dst);
    case ncclInt64:
      return storeInteger<int64_t>(value, dst);
    case ncclUint64:
      return storeInteger<uint64_t>(value, dst);
    case ncclFloat16:
      return storeBits<uint16_t>(encodeSmallFloat(kHalf, value), dst);
    case ncclBfloat16:
      return storeBits<uint16_t>(encodeSmallFloat(kBfloat16, value), dst);
    case ncclFloat8e4m3:
      return storeBits<uint8_t>(encodeSmallFloat(kE4M3, value), dst);
    case ncclFloat8e5m2:
      return storeBits<uint8_t>(encodeSmallFloat(kE5M2, value), dst);
    case ncclFloat32: {
      float narrowed = static_cast<float>(value);
      std::memcpy(dst, &narrowed, sizeof(narrowed));
      return;
    }
    case ncclFloat64:
      std::memcpy(dst, &value, sizeof(value));
      return;
    default:
      return;
  }
}

double decodeValue(const DataType& type, const void* src) {
  switch (type.nccl) {
    case ncclInt8:
      return loadScalar<int8_t>(src);
    case ncclUint8:
      return loadScalar<uint8_t>(src);
    case ncclInt32:
      return loadScalar<int32_t>(src);
    case ncclUint32:
      return loadScalar<uint32_t>(src);
    case ncclInt64:
      return loadScalar<int64_t>(src);
    case ncclUint64:
      return loadScalar<uint64_t>(src);
    case ncclFloat16:
      return decodeSmallFloat(kHalf, loadBits<uint16_t>(src));
    case ncclBfloat16:
      return decodeSmallFloat(kBfloat16, loadBits<uint16_t>(src));
    case ncclFloat8e4m3:
      return decodeSmallFloat(kE4M3, loadBits<uint8_t>(src));
    case ncclFloat8e5m2:
      return decodeSmallFloat(kE5M2, loadBits<uint8_t>(src));
    case ncclFloat32:
      return loadScalar<float>(src);
    case ncclFloat64:
      return loadScalar<double>(src);
    default:
      return std::numeric_limits<double>::quiet_NaN();
  }
}

}  // namespace hetccl::kit
