// Checks hostReduce against references computed independently in the test:
// exact modular arithmetic for integers, double precision (rounded once to
// the destination type, with a tolerance) for floating types.
#include "runtime/host/host_reduce.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "util/dtype.h"
#include "util/error.h"
#include "util/float_formats.h"

namespace hetccl {
namespace {

// The operations as callers see them; Avg and PreMulSum are expressed
// through the Reduction's divisor and preScale.
enum class TestOp { kSum, kProd, kMax, kMin, kAvg, kPreMulSum };

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
    case TestOp::kPreMulSum:
      return "premulsum";
  }
  return "?";
}

const ncclDataType_t kAllDtypes[] = {
    ncclInt8,    ncclUint8,    ncclInt32,      ncclUint32,
    ncclInt64,   ncclUint64,   ncclFloat16,    ncclFloat32,
    ncclFloat64, ncclBfloat16, ncclFloat8e4m3, ncclFloat8e5m2};

bool isFloat(ncclDataType_t dtype) { return dtype >= ncclFloat16; }

bool isSigned(ncclDataType_t dtype) {
  return dtype == ncclInt8 || dtype == ncclInt32 || dtype == ncclInt64;
}

// ---- Reading and writing elements of any dtype as double / raw bits ----

double readFloat(ncclDataType_t dtype, const void* data, size_t i) {
  switch (dtype) {
    case ncclFloat16:
      return halfBitsToFloat(static_cast<const uint16_t*>(data)[i]);
    case ncclBfloat16:
      return bf16BitsToFloat(static_cast<const uint16_t*>(data)[i]);
    case ncclFloat8e4m3:
      return e4m3BitsToFloat(static_cast<const uint8_t*>(data)[i]);
    case ncclFloat8e5m2:
      return e5m2BitsToFloat(static_cast<const uint8_t*>(data)[i]);
    case ncclFloat32:
      return static_cast<const float*>(data)[i];
    case ncclFloat64:
      return static_cast<const double*>(data)[i];
    default:
      ADD_FAILURE() << "not a float type";
      return 0;
  }
}

void writeFloat(ncclDataType_t dtype, void* data, size_t i, double value) {
  switch (dtype) {
    case ncclFloat16:
      static_cast<uint16_t*>(data)[i] = floatToHalfBits(float(value));
      break;
    case ncclBfloat16:
      static_cast<uint16_t*>(data)[i] = floatToBf16Bits(float(value));
      break;
    case ncclFloat8e4m3:
      static_cast<uint8_t*>(data)[i] = floatToE4m3Bits(float(value));
      break;
    case ncclFloat8e5m2:
      static_cast<uint8_t*>(data)[i] = floatToE5m2Bits(float(value));
      break;
    case ncclFloat32:
      static_cast<float*>(data)[i] = float(value);
      break;
    case ncclFloat64:
      static_cast<double*>(data)[i] = value;
      break;
    default:
      ADD_FAILURE() << "not a float type";
  }
}

// Integers as their bit pattern, zero-extended to 64 bits.
uint64_t readIntBits(ncclDataType_t dtype, const void* data, size_t i) {
  uint64_t bits = 0;
  const size_t size = dtypeSize(dtype);
  std::memcpy(&bits, static_cast<const uint8_t*>(data) + i * size, size);
  return bits;
}

void writeIntBits(ncclDataType_t dtype, void* data, size_t i, uint64_t bits) {
  const size_t size = dtypeSize(dtype);
  std::memcpy(static_cast<uint8_t*>(data) + i * size, &bits, size);
}

// Sign-extends a pattern of the dtype's width (for signed types).
int64_t asSigned(ncclDataType_t dtype, uint64_t bits) {
  const int shift = 64 - 8 * int(dtypeSize(dtype));
  return int64_t(bits << shift) >> shift;
}

uint64_t widthMask(ncclDataType_t dtype) {
  const size_t size = dtypeSize(dtype);
  return size == 8 ? ~0ull : (1ull << (8 * size)) - 1;
}

// ---- Floating-point tolerance ----

struct FloatFormatInfo {
  int mantBits;  // explicit mantissa bits of the stored format
  int minExp;    // exponent of the smallest normal
};

FloatFormatInfo formatInfo(ncclDataType_t dtype) {
  switch (dtype) {
    case ncclFloat16:
      return {10, -14};
    case ncclBfloat16:
      return {7, -126};
    case ncclFloat8e4m3:
      return {3, -6};
    case ncclFloat8e5m2:
      return {2, -14};
    case ncclFloat32:
      return {23, -126};
    default:
      return {52, -1022};
  }
}

// One unit in the last place of the stored format at `value`.
double ulpOf(ncclDataType_t dtype, double value) {
  const FloatFormatInfo info = formatInfo(dtype);
  if (value == 0) return std::ldexp(1.0, info.minExp - info.mantBits);
  int exponent = 0;
  std::frexp(value, &exponent);  // value = m * 2^exponent, m in [0.5, 1)
  return std::ldexp(1.0, std::max(exponent - 1, info.minExp) - info.mantBits);
}

// Accumulation happens in float for every type but double.
double accumulationEpsilon(ncclDataType_t dtype) {
  return dtype == ncclFloat64 ? std::ldexp(1.0, -52) : std::ldexp(1.0, -23);
}

bool isNarrow(ncclDataType_t dtype) {
  return dtype == ncclFloat16 || dtype == ncclBfloat16 ||
         dtype == ncclFloat8e4m3 || dtype == ncclFloat8e5m2;
}

// ---- One test case: inputs, the call, the reference ----

struct Case {
  ncclDataType_t dtype;
  TestOp op;
  int nsrcs;
  size_t count;
};

std::string describe(const Case& c) {
  return std::string(dtypeName(c.dtype)) + " " + testOpName(c.op) +
         " nsrcs=" + std::to_string(c.nsrcs) +
         " count=" + std::to_string(c.count);
}

class Buffers {
 public:
  Buffers(const Case& c, uint64_t seed) : c_(c), rng_(seed) {
    const size_t bytes = c.count * dtypeSize(c.dtype);
    for (int s = 0; s < c.nsrcs; ++s) {
      srcs_.emplace_back(bytes + 1);  // +1 keeps data() valid when count = 0
      for (size_t i = 0; i < c.count; ++i) fillElement(srcs_.back().data(), i);
    }
  }

  std::vector<const void*> srcPointers() const {
    std::vector<const void*> pointers;
    for (const auto& src : srcs_) pointers.push_back(src.data());
    return pointers;
  }
  const void* src(int s) const { return srcs_[s].data(); }
  void* mutableSrc(int s) { return srcs_[s].data(); }

 private:
  void fillElement(void* data, size_t i) {
    if (!isFloat(c_.dtype)) {
      writeIntBits(c_.dtype, data, i, rng_());  // full range: tests wrapping
      return;
    }
    double value;
    if (c_.op == TestOp::kProd) {
      // Magnitudes near 1 so that products of 8 stay well inside fp8 range.
      value = std::uniform_real_distribution<double>(0.75, 1.5)(rng_);
      if (rng_() & 1) value = -value;
    } else if (c_.op == TestOp::kMax || c_.op == TestOp::kMin) {
      value = std::uniform_real_distribution<double>(-100, 100)(rng_);
    } else {
      value = std::uniform_real_distribution<double>(-4, 4)(rng_);
    }
    writeFloat(c_.dtype, data, i, value);  // stored value is exact input
  }

  Case c_;
  std::mt19937_64 rng_;
  std::vector<std::vector<uint8_t>> srcs_;
};

constexpr uint64_t kIntScale = 3;
constexpr double kFloatScale = 1.25;  // exact in every float format
constexpr uint64_t kDivisor = 3;

// The Reduction that expresses a TestOp. `scaleStorage` holds the preScale
// element.
struct Call {
  Reduction reduction;
  bool applyPreScale = false;
  uint64_t scaleStorage = 0;
};

Call makeCall(ncclDataType_t dtype, TestOp op) {
  Call call;
  call.reduction.dtype = dtype;
  call.reduction.op = ncclSum;
  switch (op) {
    case TestOp::kSum:
      break;
    case TestOp::kProd:
      call.reduction.op = ncclProd;
      break;
    case TestOp::kMax:
      call.reduction.op = ncclMax;
      break;
    case TestOp::kMin:
      call.reduction.op = ncclMin;
      break;
    case TestOp::kAvg:
      call.reduction.divisor = kDivisor;
      break;
    case TestOp::kPreMulSum:
      call.applyPreScale = true;
      if (isFloat(dtype))
        writeFloat(dtype, &call.scaleStorage, 0, kFloatScale);
      else
        writeIntBits(dtype, &call.scaleStorage, 0, kIntScale);
      break;
  }
  return call;
}

void runReduce(void* dst, const std::vector<const void*>& srcs, size_t count,
               Call& call) {
  // The storage moves with the Call: point at it only now.
  if (call.applyPreScale) call.reduction.preScale = &call.scaleStorage;
  hostReduce(dst, srcs.data(), int(srcs.size()), count, call.reduction);
}

// Exact reference for integers: modular arithmetic on 64-bit patterns,
// truncated to the type's width, which is what wrap-around means.
uint64_t intReference(const Case& c, const Buffers& in, size_t i) {
  const uint64_t mask = widthMask(c.dtype);
  auto element = [&](int s) { return readIntBits(c.dtype, in.src(s), i); };
  auto less = [&](uint64_t a, uint64_t b) {
    return isSigned(c.dtype) ? asSigned(c.dtype, a) < asSigned(c.dtype, b)
                             : a < b;
  };
  uint64_t result = element(0);
  if (c.op == TestOp::kPreMulSum) result *= kIntScale;
  for (int s = 1; s < c.nsrcs; ++s) {
    const uint64_t x = element(s);
    switch (c.op) {
      case TestOp::kSum:
      case TestOp::kAvg:
        result += x;
        break;
      case TestOp::kPreMulSum:
        result += x * kIntScale;
        break;
      case TestOp::kProd:
        result *= x;
        break;
      case TestOp::kMax:
        result = less(result & mask, x) ? x : result;
        break;
      case TestOp::kMin:
        result = less(x, result & mask) ? x : result;
        break;
    }
  }
  result &= mask;
  if (c.op == TestOp::kAvg) {
    result = isSigned(c.dtype)
                 ? uint64_t(asSigned(c.dtype, result) / int64_t(kDivisor))
                 : result / kDivisor;
  }
  return result & mask;
}

struct FloatReference {
  double value;
  double magnitude;  // scale of the rounding error: sum of |terms| or |prod|
};

FloatReference floatReference(const Case& c, const Buffers& in, size_t i) {
  auto element = [&](int s) { return readFloat(c.dtype, in.src(s), i); };
  double value = element(0);
  if (c.op == TestOp::kPreMulSum) value *= kFloatScale;
  double magnitude = std::fabs(value);
  for (int s = 1; s < c.nsrcs; ++s) {
    double x = element(s);
    switch (c.op) {
      case TestOp::kPreMulSum:
        x *= kFloatScale;
        [[fallthrough]];
      case TestOp::kSum:
      case TestOp::kAvg:
        value += x;
        magnitude += std::fabs(x);
        break;
      case TestOp::kProd:
        value *= x;
        magnitude = std::fabs(value);
        break;
      case TestOp::kMax:
        value = std::max(value, x);
        break;
      case TestOp::kMin:
        value = std::min(value, x);
        break;
    }
  }
  if (c.op == TestOp::kAvg) {
    value /= double(kDivisor);
    magnitude /= double(kDivisor);
  }
  return {value, magnitude};
}

void checkResult(const Case& c, const Buffers& in, const void* dst) {
  for (size_t i = 0; i < c.count; ++i) {
    if (!isFloat(c.dtype)) {
      ASSERT_EQ(readIntBits(c.dtype, dst, i), intReference(c, in, i))
          << describe(c) << " element " << i;
      continue;
    }
    const FloatReference ref = floatReference(c, in, i);
    const double got = readFloat(c.dtype, dst, i);
    // Accumulation error grows with the number of operations; narrow types
    // then round once, which may add up to one unit in their last place.
    double tolerance =
        (c.nsrcs + 1) * accumulationEpsilon(c.dtype) * ref.magnitude;
    if (isNarrow(c.dtype)) tolerance += ulpOf(c.dtype, ref.value);
    if (c.op == TestOp::kMax || c.op == TestOp::kMin) tolerance = 0;
    ASSERT_LE(std::fabs(got - ref.value), tolerance)
        << describe(c) << " element " << i << " got " << got << " expected "
        << ref.value;
  }
}

TEST(HostReduce, EveryDtypeOpSourceCountAndLength) {
  const TestOp ops[] = {TestOp::kSum, TestOp::kProd, TestOp::kMax,
                        TestOp::kMin, TestOp::kAvg,  TestOp::kPreMulSum};
  uint64_t seed = 1;
  for (ncclDataType_t dtype : kAllDtypes) {
    for (TestOp op : ops) {
      for (int nsrcs : {1, 2, 3, 5, 8}) {
        for (size_t count : {0, 1, 7, 1000, 4099}) {
          const Case c{dtype, op, nsrcs, count};
          const Buffers in(c, seed++);
          std::vector<uint8_t> dst(count * dtypeSize(dtype) + 1, 0xa5);
          Call call = makeCall(dtype, op);
          runReduce(dst.data(), in.srcPointers(), count, call);
          checkResult(c, in, dst.data());
          if (HasFatalFailure()) return;
          EXPECT_EQ(dst.back(), 0xa5) << describe(c) << ": wrote past the end";
        }
      }
    }
  }
}

// dst may be any of the sources: the in-place result equals the
// out-of-place one bit for bit.
TEST(HostReduce, InPlaceMatchesOutOfPlace) {
  for (ncclDataType_t dtype : kAllDtypes) {
    for (auto [nsrcs, aliased] :
         {std::pair{2, 0}, std::pair{2, 1}, std::pair{3, 2}, std::pair{5, 0},
          std::pair{5, 2}, std::pair{5, 4}}) {
      const Case c{dtype, TestOp::kAvg, nsrcs, 3001};
      Buffers in(c, 77);
      const size_t bytes = c.count * dtypeSize(dtype);
      std::vector<uint8_t> expected(bytes);
      Call call = makeCall(dtype, c.op);
      runReduce(expected.data(), in.srcPointers(), c.count, call);
      runReduce(in.mutableSrc(aliased), in.srcPointers(), c.count, call);
      EXPECT_EQ(std::memcmp(in.src(aliased), expected.data(), bytes), 0)
          << dtypeName(dtype) << " dst == srcs[" << aliased << "]";
    }
  }
}

// The result is exactly the left-to-right evaluation in the accumulation
// type, rounded once: every rank that reduces the same inputs agrees
// bit for bit.
TEST(HostReduce, AccumulatesLeftToRightAndRoundsOnce) {
  const Case c{ncclFloat32, TestOp::kSum, 8, 5000};
  const Buffers in(c, 99);
  std::vector<float> dst(c.count);
  Call call = makeCall(c.dtype, c.op);
  runReduce(dst.data(), in.srcPointers(), c.count, call);
  for (size_t i = 0; i < c.count; ++i) {
    float expected = static_cast<const float*>(in.src(0))[i];
    for (int s = 1; s < c.nsrcs; ++s)
      expected += static_cast<const float*>(in.src(s))[i];
    ASSERT_EQ(std::memcmp(&dst[i], &expected, sizeof(float)), 0) << i;
  }

  const Case h{ncclFloat16, TestOp::kSum, 8, 5000};
  const Buffers halves(h, 100);
  std::vector<uint16_t> halfDst(h.count);
  Call halfCall = makeCall(h.dtype, h.op);
  runReduce(halfDst.data(), halves.srcPointers(), h.count, halfCall);
  for (size_t i = 0; i < h.count; ++i) {
    float sum = 0;
    for (int s = 0; s < h.nsrcs; ++s)
      sum += halfBitsToFloat(static_cast<const uint16_t*>(halves.src(s))[i]);
    ASSERT_EQ(halfDst[i], floatToHalfBits(sum)) << i;
  }
}

// Every fp16 pattern, paired with another, through each kernel variant: the
// results must be exactly the portable conversions applied to the float
// arithmetic, whichever instructions the engine picked on this CPU.
TEST(HostReduce, HalfMatchesPortableConversionsForEveryPattern) {
  const size_t count = 65536;
  std::vector<uint16_t> a(count), b(count), dst(count);
  std::mt19937 rng(3);
  for (size_t i = 0; i < count; ++i) {
    a[i] = uint16_t(i);
    b[i] = uint16_t(rng());
  }
  const uint16_t scaleBits = floatToHalfBits(0.3f);
  const float scale = halfBitsToFloat(scaleBits);
  struct Variant {
    ncclRedOp_t op;
    bool scaled;
    bool divided;
  };
  for (Variant v :
       {Variant{ncclSum, false, false}, Variant{ncclSum, true, false},
        Variant{ncclSum, false, true}, Variant{ncclSum, true, true},
        Variant{ncclMax, false, false}, Variant{ncclProd, false, true}}) {
    Reduction r{ncclFloat16, v.op};
    if (v.scaled) r.preScale = &scaleBits;
    if (v.divided) r.divisor = 3;
    const void* srcs[] = {a.data(), b.data()};
    hostReduce(dst.data(), srcs, 2, count, r);
    for (size_t i = 0; i < count; ++i) {
      float x = halfBitsToFloat(a[i]), y = halfBitsToFloat(b[i]);
      if (v.scaled) {
        x *= scale;
        y *= scale;
      }
      float combined = v.op == ncclSum    ? x + y
                       : v.op == ncclProd ? x * y
                       : std::isnan(x) || std::isnan(y)
                           ? std::numeric_limits<float>::quiet_NaN()
                           : std::max(x, y);
      if (v.divided) combined /= 3.0f;
      const uint16_t expected = floatToHalfBits(combined);
      if (std::isnan(combined)) {
        ASSERT_TRUE(std::isnan(halfBitsToFloat(dst[i]))) << i;
      } else {
        ASSERT_EQ(dst[i], expected)
            << redOpName(v.op) << " scaled=" << v.scaled
            << " divided=" << v.divided << " a=" << a[i] << " b=" << b[i];
      }
    }
  }
}

TEST(HostReduce, RepeatedCallsAreBitwiseIdentical) {
  for (ncclDataType_t dtype : kAllDtypes) {
    const Case c{dtype, TestOp::kAvg, 7, 4099};
    const Buffers in(c, 5);
    const size_t bytes = c.count * dtypeSize(dtype);
    std::vector<uint8_t> first(bytes), second(bytes);
    Call call = makeCall(dtype, c.op);
    runReduce(first.data(), in.srcPointers(), c.count, call);
    runReduce(second.data(), in.srcPointers(), c.count, call);
    EXPECT_EQ(first, second) << dtypeName(dtype);
  }
}

TEST(HostReduce, MaxMinPropagateNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float a[] = {nan, 1.0f, nan, -3.0f};
  const float b[] = {2.0f, nan, nan, -4.0f};
  float dst[4];
  for (ncclRedOp_t op : {ncclMax, ncclMin}) {
    Reduction r{ncclFloat32, op};
    const void* srcs[] = {a, b};
    hostReduce(dst, srcs, 2, 4, r);
    EXPECT_TRUE(std::isnan(dst[0])) << redOpName(op);
    EXPECT_TRUE(std::isnan(dst[1])) << redOpName(op);
    EXPECT_TRUE(std::isnan(dst[2])) << redOpName(op);
    EXPECT_EQ(dst[3], op == ncclMax ? -3.0f : -4.0f);
  }
  const uint16_t ha[] = {0x7e00, floatToHalfBits(1.0f)};
  const uint16_t hb[] = {floatToHalfBits(5.0f), 0x7e00};
  uint16_t hdst[2];
  Reduction r{ncclFloat16, ncclMax};
  const void* hsrcs[] = {ha, hb};
  hostReduce(hdst, hsrcs, 2, 2, r);
  EXPECT_TRUE(std::isnan(halfBitsToFloat(hdst[0])));
  EXPECT_TRUE(std::isnan(halfBitsToFloat(hdst[1])));
}

TEST(HostReduce, IntegerAverageTruncatesTowardZero) {
  const int32_t a[] = {-7, 7, -1, std::numeric_limits<int32_t>::max()};
  const int32_t b[] = {0, 0, 0, 1};  // the last sum wraps to INT32_MIN
  int32_t dst[4];
  Reduction r{ncclInt32, ncclSum};
  r.divisor = 2;
  const void* srcs[] = {a, b};
  hostReduce(dst, srcs, 2, 4, r);
  EXPECT_EQ(dst[0], -3);
  EXPECT_EQ(dst[1], 3);
  EXPECT_EQ(dst[2], 0);
  EXPECT_EQ(dst[3], std::numeric_limits<int32_t>::min() / 2);

  const int64_t big[] = {std::numeric_limits<int64_t>::min(), -5};
  int64_t bigDst[2];
  Reduction huge{ncclInt64, ncclSum};
  huge.divisor = uint64_t(1) << 63;  // only INT64_MIN reaches -1
  const void* one[] = {big};
  hostReduce(bigDst, one, 1, 2, huge);
  EXPECT_EQ(bigDst[0], -1);
  EXPECT_EQ(bigDst[1], 0);
}

TEST(HostReduce, PreScaleAndDivisorTogether) {
  const double a[] = {1.0, 10.0};
  const double b[] = {3.0, -2.0};
  const double scale = 0.5;
  double dst[2];
  Reduction r{ncclFloat64, ncclSum, &scale, 4};
  const void* srcs[] = {a, b};
  hostReduce(dst, srcs, 2, 2, r);
  EXPECT_EQ(dst[0], 0.5);  // (0.5 + 1.5) / 4
  EXPECT_EQ(dst[1], 1.0);  // (5 - 1) / 4
}

// One source and a divisor: dividing partial sums combined elsewhere.
TEST(HostReduce, OneSourceWithDivisorDividesInPlace) {
  auto divideInPlace = [](void* data, size_t count, const Reduction& r) {
    const void* srcs[] = {data};
    hostReduce(data, srcs, 1, count, r);
  };
  std::vector<float> data = {3.0f, -9.0f, 1.5f};
  Reduction r{ncclFloat32, ncclSum};
  r.divisor = 3;
  divideInPlace(data.data(), data.size(), r);
  EXPECT_EQ(data, (std::vector<float>{1.0f, -3.0f, 0.5f}));

  std::vector<uint16_t> bf = {floatToBf16Bits(6.0f), floatToBf16Bits(-1.0f)};
  Reduction rb{ncclBfloat16, ncclSum};
  rb.divisor = 4;
  divideInPlace(bf.data(), bf.size(), rb);
  EXPECT_EQ(bf16BitsToFloat(bf[0]), 1.5f);
  EXPECT_EQ(bf16BitsToFloat(bf[1]), -0.25f);

  std::vector<uint8_t> bytes = {200, 7};
  Reduction ru{ncclUint8, ncclSum};
  ru.divisor = 8;
  divideInPlace(bytes.data(), bytes.size(), ru);
  EXPECT_EQ(bytes, (std::vector<uint8_t>{25, 0}));
}

TEST(HostReduce, CountZeroLeavesDestinationAlone) {
  float dst = 42.0f;
  const float src = 1.0f;
  Reduction r{ncclFloat32, ncclSum};
  const void* srcs[] = {&src, &src};
  hostReduce(&dst, srcs, 2, 0, r);
  EXPECT_EQ(dst, 42.0f);
}

ncclResult_t errorCode(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.code();
  }
  return ncclSuccess;
}

TEST(HostReduce, RejectsInvalidArguments) {
  float a[4] = {}, b[4] = {}, dst[4];
  const void* srcs[] = {a, b};
  Reduction good{ncclFloat32, ncclSum};
  EXPECT_EQ(errorCode([&] { hostReduce(dst, srcs, 2, 4, good); }), ncclSuccess);

  Reduction badType{ncclDataType_t(ncclNumTypes), ncclSum};
  EXPECT_EQ(errorCode([&] { hostReduce(dst, srcs, 2, 4, badType); }),
            ncclInvalidArgument);
  Reduction avgOp{ncclFloat32, ncclAvg};
  EXPECT_EQ(errorCode([&] { hostReduce(dst, srcs, 2, 4, avgOp); }),
            ncclInvalidArgument);
  EXPECT_EQ(errorCode([&] { hostReduce(dst, srcs, 0, 4, good); }),
            ncclInvalidArgument);
  Reduction zeroDivisor{ncclInt32, ncclSum};
  zeroDivisor.divisor = 0;
  EXPECT_EQ(errorCode([&] { hostReduce(dst, srcs, 2, 4, zeroDivisor); }),
            ncclInvalidArgument);
  const void* withNull[] = {a, nullptr};
  EXPECT_EQ(errorCode([&] { hostReduce(dst, withNull, 2, 4, good); }),
            ncclInvalidArgument);
}

// The dtype facts the engine relies on (util/dtype.h).
TEST(Dtype, SizesAndNames) {
  const size_t sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
  for (ncclDataType_t dtype : kAllDtypes) {
    EXPECT_TRUE(dtypeValid(dtype));
    EXPECT_EQ(dtypeSize(dtype), sizes[dtype]) << dtypeName(dtype);
  }
  EXPECT_STREQ(dtypeName(ncclFloat32), "float32");
  EXPECT_STREQ(dtypeName(ncclBfloat16), "bfloat16");
  EXPECT_STREQ(dtypeName(ncclFloat8e4m3), "fp8e4m3");
  EXPECT_FALSE(dtypeValid(ncclDataType_t(ncclNumTypes)));
  EXPECT_FALSE(dtypeValid(ncclDataType_t(-1)));
  EXPECT_EQ(dtypeSize(ncclDataType_t(99)), 0u);
  EXPECT_STREQ(dtypeName(ncclDataType_t(99)), "invalid");
}

TEST(Dtype, RedOpNames) {
  const char* names[] = {"sum", "prod", "max", "min", "avg"};
  for (int op = 0; op < ncclNumOps; ++op)
    EXPECT_STREQ(redOpName(ncclRedOp_t(op)), names[op]);
  EXPECT_STREQ(redOpName(ncclRedOp_t(ncclNumOps)), "invalid");
}

}  // namespace
}  // namespace hetccl
