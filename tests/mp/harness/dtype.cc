#include "harness/dtype.h"

#include <cmath>
#include <cstring>

namespace hetccl::mp {
namespace {

// A binary float format narrower than float: sign, exponent, mantissa.
// `ieeeSpecials`: the all-ones exponent holds Inf/NaN (fp16, bf16, e5m2);
// e4m3 (the OCP "fn" variant) has no Inf and only S.1111.111 is NaN.
struct NarrowFormat {
  int exponentBits;
  int mantissaBits;
  bool ieeeSpecials;
};

constexpr NarrowFormat kFloat16{5, 10, true};
constexpr NarrowFormat kBfloat16{8, 7, true};
constexpr NarrowFormat kE4M3{4, 3, false};
constexpr NarrowFormat kE5M2{5, 2, true};

const NarrowFormat* narrowFormat(ncclDataType_t type) {
  switch (type) {
    case ncclFloat16:
      return &kFloat16;
    case ncclBfloat16:
      return &kBfloat16;
    case ncclFloat8e4m3:
      return &kE4M3;
    case ncclFloat8e5m2:
      return &kE5M2;
    default:
      return nullptr;
  }
}

int bias(const NarrowFormat& f) { return (1 << (f.exponentBits - 1)) - 1; }
uint32_t exponentMask(const NarrowFormat& f) {
  return (1u << f.exponentBits) - 1;
}
uint32_t mantissaMask(const NarrowFormat& f) {
  return (1u << f.mantissaBits) - 1;
}

bool isNanBits(uint32_t bits, const NarrowFormat& f) {
  uint32_t exponent = (bits >> f.mantissaBits) & exponentMask(f);
  uint32_t mantissa = bits & mantissaMask(f);
  if (exponent != exponentMask(f)) return false;
  return f.ieeeSpecials ? mantissa != 0 : mantissa == mantissaMask(f);
}

bool isInfBits(uint32_t bits, const NarrowFormat& f) {
  uint32_t exponent = (bits >> f.mantissaBits) & exponentMask(f);
  return f.ieeeSpecials && exponent == exponentMask(f) &&
         (bits & mantissaMask(f)) == 0;
}

double decodeNarrow(uint32_t bits, const NarrowFormat& f) {
  bool negative = (bits >> (f.exponentBits + f.mantissaBits)) & 1;
  uint32_t exponent = (bits >> f.mantissaBits) & exponentMask(f);
  uint32_t mantissa = bits & mantissaMask(f);
  double value;
  if (isNanBits(bits, f)) {
    value = std::nan("");
  } else if (isInfBits(bits, f)) {
    value = INFINITY;
  } else if (exponent == 0) {
    value = std::ldexp(mantissa, 1 - bias(f) - f.mantissaBits);
  } else {
    value = std::ldexp(mantissa + (1u << f.mantissaBits),
                       static_cast<int>(exponent) - bias(f) - f.mantissaBits);
  }
  return negative ? -value : value;
}

uint32_t encodeNarrow(double value, const NarrowFormat& f) {
  uint32_t signBit = 1u << (f.exponentBits + f.mantissaBits);
  uint32_t allOnesExponent = exponentMask(f) << f.mantissaBits;
  if (std::isnan(value)) {
    return f.ieeeSpecials ? allOnesExponent | (1u << (f.mantissaBits - 1))
                          : allOnesExponent | mantissaMask(f);
  }
  uint32_t sign = std::signbit(value) ? signBit : 0;
  double magnitude = std::fabs(value);
  if (magnitude == 0) return sign;
  if (std::isinf(magnitude)) {
    // e4m3 has no infinity: NaN is all it can say.
    return f.ieeeSpecials ? sign | allOnesExponent
                          : sign | allOnesExponent | mantissaMask(f);
  }
  int exponent2;
  std::frexp(magnitude,
             &exponent2);  // magnitude = f * 2^exponent2, f in [.5,1)
  int biased = exponent2 - 1 + bias(f);
  // Scale so that the kept mantissa bits are the integer part; the scaling
  // is exact, and nearbyint rounds half to even.
  int scale = biased <= 0 ? 1 - bias(f) - f.mantissaBits
                          : exponent2 - 1 - f.mantissaBits;
  auto rounded =
      static_cast<uint32_t>(std::nearbyint(std::ldexp(magnitude, -scale)));
  // A carry out of the mantissa lands in the exponent field, as it should.
  uint32_t bits = biased <= 0
                      ? rounded
                      : (static_cast<uint32_t>(biased) << f.mantissaBits) +
                            rounded - (1u << f.mantissaBits);
  bool overflow = f.ieeeSpecials ? bits >= allOnesExponent
                                 : bits >= (allOnesExponent | mantissaMask(f));
  if (overflow) {
    // IEEE formats round to infinity; e4m3 has none and saturates to NaN.
    bits = f.ieeeSpecials ? allOnesExponent : allOnesExponent | mantissaMask(f);
  }
  return sign | bits;
}

template <typename T>
T loadRaw(const void* element) {
  T value;
  std::memcpy(&value, element, sizeof(T));
  return value;
}

template <typename T>
void storeRaw(T value, void* element) {
  std::memcpy(element, &value, sizeof(T));
}

uint32_t loadNarrowBits(const void* element, ncclDataType_t type) {
  return dataTypeSize(type) == 1 ? loadRaw<uint8_t>(element)
                                 : loadRaw<uint16_t>(element);
}

}  // namespace

const std::vector<ncclDataType_t>& allDataTypes() {
  static const std::vector<ncclDataType_t> types = {
      ncclInt8,    ncclUint8,    ncclInt32,      ncclUint32,
      ncclInt64,   ncclUint64,   ncclFloat16,    ncclFloat32,
      ncclFloat64, ncclBfloat16, ncclFloat8e4m3, ncclFloat8e5m2};
  return types;
}

const char* dataTypeName(ncclDataType_t type) {
  switch (type) {
    case ncclInt8:
      return "int8";
    case ncclUint8:
      return "uint8";
    case ncclInt32:
      return "int32";
    case ncclUint32:
      return "uint32";
    case ncclInt64:
      return "int64";
    case ncclUint64:
      return "uint64";
    case ncclFloat16:
      return "float16";
    case ncclFloat32:
      return "float32";
    case ncclFloat64:
      return "float64";
    case ncclBfloat16:
      return "bfloat16";
    case ncclFloat8e4m3:
      return "fp8e4m3";
    case ncclFloat8e5m2:
      return "fp8e5m2";
    default:
      return "unknown-type";
  }
}

size_t dataTypeSize(ncclDataType_t type) {
  switch (type) {
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

bool isFloatType(ncclDataType_t type) {
  switch (type) {
    case ncclFloat16:
    case ncclFloat32:
    case ncclFloat64:
    case ncclBfloat16:
    case ncclFloat8e4m3:
    case ncclFloat8e5m2:
      return true;
    default:
      return false;
  }
}

bool isSignedType(ncclDataType_t type) {
  return type == ncclInt8 || type == ncclInt32 || type == ncclInt64 ||
         isFloatType(type);
}

double exactIntegerLimit(ncclDataType_t type) {
  constexpr double kCap = 1125899906842624.0;  // 2^50
  switch (type) {
    case ncclInt8:
      return 127;
    case ncclUint8:
      return 255;
    case ncclInt32:
      return 2147483647.0;
    case ncclUint32:
      return 4294967295.0;
    case ncclFloat16:
      return 2048;
    case ncclBfloat16:
      return 256;
    case ncclFloat8e4m3:
      return 16;
    case ncclFloat8e5m2:
      return 8;
    case ncclFloat32:
      return 16777216.0;
    default:
      return kCap;  // int64, uint64, float64
  }
}

double relativeEpsilon(ncclDataType_t type) {
  switch (type) {
    case ncclFloat16:
      return std::ldexp(1.0, -10);
    case ncclBfloat16:
      return std::ldexp(1.0, -7);
    case ncclFloat8e4m3:
      return std::ldexp(1.0, -3);
    case ncclFloat8e5m2:
      return std::ldexp(1.0, -2);
    case ncclFloat32:
      return std::ldexp(1.0, -23);
    case ncclFloat64:
      return std::ldexp(1.0, -52);
    default:
      return 0;
  }
}

double loadAsDouble(const void* element, ncclDataType_t type) {
  switch (type) {
    case ncclInt8:
      return loadRaw<int8_t>(element);
    case ncclUint8:
      return loadRaw<uint8_t>(element);
    case ncclInt32:
      return loadRaw<int32_t>(element);
    case ncclUint32:
      return loadRaw<uint32_t>(element);
    case ncclInt64:
      return static_cast<double>(loadRaw<int64_t>(element));
    case ncclUint64:
      return static_cast<double>(loadRaw<uint64_t>(element));
    case ncclFloat32:
      return loadRaw<float>(element);
    case ncclFloat64:
      return loadRaw<double>(element);
    default:
      return decodeNarrow(loadNarrowBits(element, type), *narrowFormat(type));
  }
}

void storeFromDouble(double value, ncclDataType_t type, void* element) {
  switch (type) {
    case ncclInt8:
      storeRaw(static_cast<int8_t>(value), element);
      return;
    case ncclUint8:
      storeRaw(static_cast<uint8_t>(value), element);
      return;
    case ncclInt32:
      storeRaw(static_cast<int32_t>(value), element);
      return;
    case ncclUint32:
      storeRaw(static_cast<uint32_t>(value), element);
      return;
    case ncclInt64:
      storeRaw(static_cast<int64_t>(value), element);
      return;
    case ncclUint64:
      storeRaw(static_cast<uint64_t>(value), element);
      return;
    case ncclFloat32:
      storeRaw(static_cast<float>(value), element);
      return;
    case ncclFloat64:
      storeRaw(value, element);
      return;
    default:
      break;
  }
  uint32_t bits = encodeNarrow(value, *narrowFormat(type));
  if (dataTypeSize(type) == 1) {
    storeRaw(static_cast<uint8_t>(bits), element);
  } else {
    storeRaw(static_cast<uint16_t>(bits), element);
  }
}

bool isFiniteElement(const void* element, ncclDataType_t type) {
  if (!isFloatType(type)) return true;
  return std::isfinite(loadAsDouble(element, type));
}

}  // namespace hetccl::mp
