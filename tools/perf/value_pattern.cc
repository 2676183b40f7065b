#include "perf/value_pattern.h"

#include <algorithm>
#include <cmath>

namespace hetccl {
namespace perf {
namespace {

// Keeps values readable in wide types; small types are limited further.
constexpr int64_t kMagnitudeCap = 100;

uint64_t mixBits(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

uint64_t hashOf(uint64_t seed, int rank, size_t index) {
  return mixBits(seed + static_cast<uint64_t>(index) * 0x9e3779b97f4a7c15ull +
                 static_cast<uint64_t>(rank) * 0xd1b54a32d192ed03ull);
}

size_t ceilDiv(size_t a, size_t b) { return (a + b - 1) / b; }

// How many ranks may contribute to one element so that `limit` still bounds
// the combined magnitude, expressed as the stride of the rotating subset.
size_t strideFor(int nranks, int64_t limit) {
  const size_t ranks = static_cast<size_t>(nranks);
  const size_t contributors =
      std::max<size_t>(1, std::min<size_t>(ranks, static_cast<size_t>(limit)));
  return ceilDiv(ranks, contributors);
}

}  // namespace

ValuePattern::ValuePattern(const kit::DataType& type, const ReduceOp* op,
                           int nranks, uint64_t seed)
    : type_(type),
      kind_(op ? op->kind : OpKind::kMax),
      reduces_(op != nullptr),
      nranks_(nranks),
      seed_(seed),
      magnitude_(1),
      activeStride_(1) {
  const int64_t limit = std::min(type.exactLimit, int64_t{1} << 40);
  switch (kind_) {
    case OpKind::kSum:
    case OpKind::kAvg:
    case OpKind::kPreMulSum: {
      // PreMulSum doubles every input, so it has half the headroom.
      const int64_t headroom =
          kind_ == OpKind::kPreMulSum ? std::max<int64_t>(1, limit / 2) : limit;
      activeStride_ = strideFor(nranks, headroom);
      const int64_t contributors = static_cast<int64_t>(
          ceilDiv(static_cast<size_t>(nranks), activeStride_));
      magnitude_ = std::max<int64_t>(
          1, std::min(kMagnitudeCap, headroom / contributors));
      break;
    }
    case OpKind::kProd:
      activeStride_ = strideFor(nranks, type.maxPow2);
      magnitude_ = 2;
      break;
    case OpKind::kMax:
    case OpKind::kMin:
      magnitude_ = std::min(kMagnitudeCap, limit);
      break;
  }
}

bool ValuePattern::isActive(int rank, size_t index) const {
  return (index + static_cast<size_t>(rank)) % activeStride_ == 0;
}

double ValuePattern::value(int rank, size_t index) const {
  const uint64_t hash = hashOf(seed_, rank, index);
  if (kind_ == OpKind::kProd && reduces_) {
    // Factors +-1, and +-2 on active ranks: products are signed powers of 2.
    const double factor = isActive(rank, index) && (hash & 1) ? 2.0 : 1.0;
    return type_.isSigned && (hash & 2) ? -factor : factor;
  }
  if (reduces_ && !isActive(rank, index)) return 0.0;
  const uint64_t span = type_.isSigned ? 2 * magnitude_ + 1 : magnitude_ + 1;
  const int64_t offset = type_.isSigned ? -magnitude_ : 0;
  return static_cast<double>(offset + static_cast<int64_t>((hash >> 8) % span));
}

Expected ValuePattern::reduced(size_t index) const {
  double result = value(0, index);
  double sumOfMagnitudes = std::fabs(result);
  for (int rank = 1; rank < nranks_; ++rank) {
    const double x = value(rank, index);
    sumOfMagnitudes += std::fabs(x);
    switch (kind_) {
      case OpKind::kProd:
        result *= x;
        break;
      case OpKind::kMax:
        result = std::max(result, x);
        break;
      case OpKind::kMin:
        result = std::min(result, x);
        break;
      default:
        result += x;
        break;
    }
  }
  if (kind_ == OpKind::kPreMulSum) return Expected{kPreMulScalar * result, 0};
  if (kind_ != OpKind::kAvg) return Expected{result, 0};
  const double n = nranks_;
  const double average = result / n;
  if (!type_.isFloat) {
    // Integer division may truncate or floor: anything within 1 is right.
    return Expected{average, 1.0 - 1e-9};
  }
  // Whether the library divides first (premultiplies by 1/n) or last, each
  // step rounds by at most the type's unit roundoff.
  const double u = type_.unitRoundoff;
  const double tolerance = (n + 2) * u * (sumOfMagnitudes / n) +
                           u * std::fabs(average) +
                           (n + 2) * type_.smallestPositive;
  return Expected{average, tolerance};
}

bool ValuePattern::matches(double got, const Expected& expected) {
  if (std::isnan(got)) return false;
  if (expected.tolerance == 0) return got == expected.value;
  return std::fabs(got - expected.value) <= expected.tolerance;
}

}  // namespace perf
}  // namespace hetccl
