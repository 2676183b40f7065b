#include "harness/data.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <sstream>

#include "kit/dtype.h"

namespace hetccl::mp {
namespace {

constexpr size_t kMaxElementSize = 8;

struct Element {
  unsigned char bytes[kMaxElementSize] = {};
};

// The largest N such that every integer in [-N, N] is stored exactly in
// `type`, capped at 2^50 so that doubles hold the sums of such values.
double exactIntegerLimit(ncclDataType_t type) {
  constexpr double kSumCap = 1125899906842624.0;  // 2^50
  return std::min(static_cast<double>(kit::dataTypeOf(type).exactLimit),
                  kSumCap);
}

// Largest |x| for sum-like ops such that nranks * factor * |x| is exact.
double sumAmplitude(const ReduceSpec& spec) {
  double factor = (isPreMulSum(spec.op) && !kit::dataTypeOf(spec.type).isFloat)
                      ? preMulSumScalar(spec.type)
                      : 1.0;
  return std::floor(exactIntegerLimit(spec.type) / (spec.nranks * factor));
}

double uniformInteger(uint64_t bits, double low, double high) {
  auto span = static_cast<uint64_t>(high - low) + 1;
  return low + static_cast<double>(bits % span);
}

// Products stay within +-64: at most six ranks may contribute a 2 to any
// one element (which six rotates with the index), the rest give +-1.
double productInput(const ReduceSpec& spec, int rank, size_t index,
                    uint64_t bits) {
  int twosAllowed = std::min(spec.nranks, 6);
  bool mayBeTwo = static_cast<int>((index + rank) % spec.nranks) < twosAllowed;
  bool negativeAllowed = kit::dataTypeOf(spec.type).isSigned;
  double choices[3];
  int n = 0;
  choices[n++] = 1;
  if (mayBeTwo) choices[n++] = 2;
  if (negativeAllowed) choices[n++] = -1;
  return choices[bits % n];
}

double numericInput(const ReduceSpec& spec, int rank, size_t index,
                    uint64_t bits) {
  if (spec.op == TestOp::kProd) return productInput(spec, rank, index, bits);
  double amplitude = sumAmplitude(spec);
  // Integer averages are only compared on non-negative inputs: libraries
  // agree on truncating division there.
  bool negativeAllowed =
      kit::dataTypeOf(spec.type).isSigned &&
      (spec.op != TestOp::kAvg || kit::dataTypeOf(spec.type).isFloat);
  return uniformInteger(bits, negativeAllowed ? -amplitude : 0, amplitude);
}

void writeArbitraryFinite(ncclDataType_t type, uint64_t bits, void* element) {
  size_t size = kit::dataTypeOf(type).size;
  for (uint64_t attempt = 0;; ++attempt) {
    std::memcpy(element, &bits, size);  // little-endian low bytes
    if (std::isfinite(kit::decodeValue(kit::dataTypeOf(type), element))) return;
    bits = mixBits(bits, attempt, 0x5eed);
  }
}

// <0, 0, >0 as a is below, equal to, above b in the type's order.
int compareElements(const void* a, const void* b, ncclDataType_t type) {
  auto order = [](auto x, auto y) { return x < y ? -1 : (y < x ? 1 : 0); };
  auto load = [](const void* p, auto zero) {
    decltype(zero) value;
    std::memcpy(&value, p, sizeof(value));
    return value;
  };
  switch (type) {
    case ncclInt8:
      return order(load(a, int8_t()), load(b, int8_t()));
    case ncclUint8:
      return order(load(a, uint8_t()), load(b, uint8_t()));
    case ncclInt32:
      return order(load(a, int32_t()), load(b, int32_t()));
    case ncclUint32:
      return order(load(a, uint32_t()), load(b, uint32_t()));
    case ncclInt64:
      return order(load(a, int64_t()), load(b, int64_t()));
    case ncclUint64:
      return order(load(a, uint64_t()), load(b, uint64_t()));
    default:
      return order(kit::decodeValue(kit::dataTypeOf(type), a),
                   kit::decodeValue(kit::dataTypeOf(type), b));
  }
}

std::string formatElement(const void* element, ncclDataType_t type) {
  std::ostringstream text;
  text << std::setprecision(17);
  switch (type) {
    case ncclInt64: {
      int64_t v;
      std::memcpy(&v, element, 8);
      text << v;
      break;
    }
    case ncclUint64: {
      uint64_t v;
      std::memcpy(&v, element, 8);
      text << v;
      break;
    }
    default:
      text << kit::decodeValue(kit::dataTypeOf(type), element);
  }
  return text.str();
}

// Reference result for one element, plus whether it must match exactly.
struct Expected {
  Element element;   // bit pattern (exact ops)
  double value = 0;  // numeric value (float comparisons)
  double tolerance = 0;
};

Expected expectedElement(const ReduceSpec& spec, size_t index,
                         std::vector<Element>* inputs) {
  for (int r = 0; r < spec.nranks; ++r) {
    writeReduceInput(spec, r, index, (*inputs)[r].bytes);
  }
  Expected expected;
  if (spec.op == TestOp::kMax || spec.op == TestOp::kMin) {
    const Element* best = &(*inputs)[0];
    for (const Element& candidate : *inputs) {
      int order = compareElements(candidate.bytes, best->bytes, spec.type);
      if ((spec.op == TestOp::kMax && order > 0) ||
          (spec.op == TestOp::kMin && order < 0)) {
        best = &candidate;
      }
    }
    expected.element = *best;
    expected.value = kit::decodeValue(kit::dataTypeOf(spec.type), best->bytes);
    return expected;
  }
  double sum = 0, product = 1, largestInput = 0;
  double scalar = preMulSumScalar(spec.type);
  for (const Element& input : *inputs) {
    double x = kit::decodeValue(kit::dataTypeOf(spec.type), input.bytes);
    sum += isPreMulSum(spec.op) ? scalar * x : x;
    product *= x;
    largestInput = std::max(largestInput, std::fabs(x));
  }
  double value = spec.op == TestOp::kProd ? product : sum;
  if (spec.op == TestOp::kAvg) {
    if (kit::dataTypeOf(spec.type).isFloat) {
      value = sum / spec.nranks;
      // Scaling each input before summing rounds up to nranks + 1 times.
      expected.tolerance = (spec.nranks + 1) * 2 *
                           kit::dataTypeOf(spec.type).unitRoundoff *
                           largestInput;
    } else {
      value = static_cast<double>(static_cast<int64_t>(sum) / spec.nranks);
    }
  }
  expected.value = value;
  kit::encodeValue(kit::dataTypeOf(spec.type), value, expected.element.bytes);
  return expected;
}

bool matches(const ReduceSpec& spec, const Expected& expected,
             const void* got) {
  if (!kit::dataTypeOf(spec.type).isFloat) {
    return std::memcmp(got, expected.element.bytes,
                       kit::dataTypeOf(spec.type).size) == 0;
  }
  double value = kit::decodeValue(kit::dataTypeOf(spec.type), got);
  if (expected.tolerance > 0) {
    return std::fabs(value - expected.value) <= expected.tolerance;
  }
  return value == expected.value;  // +0 and -0 both fine
}

std::string describeMismatch(const ReduceSpec& spec, size_t index,
                             const Expected& expected, const void* got,
                             const std::vector<Element>& inputs) {
  std::ostringstream text;
  text << "element " << index << ": got " << formatElement(got, spec.type)
       << ", expected " << formatElement(expected.element.bytes, spec.type);
  if (expected.tolerance > 0) {
    text << std::setprecision(17) << " (" << expected.value << " +- "
         << expected.tolerance << ")";
  }
  text << "; inputs by rank:";
  for (const Element& input : inputs) {
    text << " " << formatElement(input.bytes, spec.type);
  }
  return text.str();
}

uint64_t patternWord(uint64_t seed, int rank, size_t wordIndex) {
  return mixBits(seed, static_cast<uint64_t>(rank) + 0x9e37, wordIndex);
}

unsigned char patternByte(uint64_t seed, int rank, size_t byteIndex) {
  return static_cast<unsigned char>(patternWord(seed, rank, byteIndex / 8) >>
                                    (8 * (byteIndex % 8)));
}

}  // namespace

const std::vector<TestOp>& allTestOps() {
  static const std::vector<TestOp> ops = {TestOp::kSum,
                                          TestOp::kProd,
                                          TestOp::kMax,
                                          TestOp::kMin,
                                          TestOp::kAvg,
                                          TestOp::kPreMulSumHost,
                                          TestOp::kPreMulSumDevice};
  return ops;
}

const char* testOpName(TestOp op) {
  switch (op) {
    case TestOp::kSum:
      return "sum";
    case TestOp::kProd:
      return "prod";
    case TestOp::kMax:
      return "max";
    case TestOp::kMin:
      return "min";
    case TestOp::kAvg:
      return "avg";
    case TestOp::kPreMulSumHost:
      return "premulsum(host scalar)";
    case TestOp::kPreMulSumDevice:
      return "premulsum(device scalar)";
  }
  return "unknown-op";
}

bool isPreMulSum(TestOp op) {
  return op == TestOp::kPreMulSumHost || op == TestOp::kPreMulSumDevice;
}

ncclRedOp_t builtinRedOp(TestOp op) {
  switch (op) {
    case TestOp::kProd:
      return ncclProd;
    case TestOp::kMax:
      return ncclMax;
    case TestOp::kMin:
      return ncclMin;
    case TestOp::kAvg:
      return ncclAvg;
    default:
      return ncclSum;
  }
}

double preMulSumScalar(ncclDataType_t type) {
  return kit::dataTypeOf(type).isFloat ? 0.5 : 3.0;
}

uint64_t mixBits(uint64_t seed, uint64_t a, uint64_t b) {
  uint64_t z = seed ^ (a * 0x9e3779b97f4a7c15ull) ^ (b * 0xc2b2ae3d27d4eb4full);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void writeReduceInput(const ReduceSpec& spec, int rank, size_t index,
                      void* element) {
  uint64_t bits = mixBits(spec.seed, static_cast<uint64_t>(rank), index);
  if (spec.op == TestOp::kMax || spec.op == TestOp::kMin) {
    writeArbitraryFinite(spec.type, bits, element);
  } else {
    kit::encodeValue(kit::dataTypeOf(spec.type),
                     numericInput(spec, rank, index, bits), element);
  }
}

void fillReduceInput(const ReduceSpec& spec, int rank, size_t firstIndex,
                     size_t count, void* buffer) {
  size_t size = kit::dataTypeOf(spec.type).size;
  auto* bytes = static_cast<unsigned char*>(buffer);
  for (size_t i = 0; i < count; ++i) {
    writeReduceInput(spec, rank, firstIndex + i, bytes + i * size);
  }
}

std::string checkReduceResult(const ReduceSpec& spec, size_t firstIndex,
                              size_t count, const void* result) {
  size_t size = kit::dataTypeOf(spec.type).size;
  const auto* bytes = static_cast<const unsigned char*>(result);
  std::vector<Element> inputs(spec.nranks);
  for (size_t i = 0; i < count; ++i) {
    Expected expected = expectedElement(spec, firstIndex + i, &inputs);
    const void* got = bytes + i * size;
    if (!matches(spec, expected, got)) {
      return describeMismatch(spec, firstIndex + i, expected, got, inputs);
    }
  }
  return std::string();
}

void fillPatternBytes(uint64_t seed, int rank, size_t firstByte, size_t bytes,
                      void* buffer) {
  auto* out = static_cast<unsigned char*>(buffer);
  for (size_t i = 0; i < bytes; ++i) {
    out[i] = patternByte(seed, rank, firstByte + i);
  }
}

std::string checkPatternBytes(uint64_t seed, int rank, size_t firstByte,
                              size_t bytes, const void* got) {
  const auto* in = static_cast<const unsigned char*>(got);
  for (size_t i = 0; i < bytes; ++i) {
    unsigned char expected = patternByte(seed, rank, firstByte + i);
    if (in[i] != expected) {
      std::ostringstream text;
      text << "byte " << i << ": got 0x" << std::hex << int(in[i])
           << ", expected 0x" << int(expected) << std::dec << " (byte "
           << firstByte + i << " of rank " << rank << "'s data)";
      return text.str();
    }
  }
  return std::string();
}

}  // namespace hetccl::mp
