#include "perf/buffer_check.h"

#include <algorithm>
#include <limits>

namespace hetccl {
namespace perf {
namespace {

// Host staging for GPU memory is used in slices of this size, so that a
// sweep to large sizes does not need a second full-size copy on the host.
constexpr size_t kStagingBytes = size_t{8} << 20;

constexpr double kPoison = std::numeric_limits<double>::quiet_NaN();

}  // namespace

BufferCheck::BufferCheck(const CheckCase& checkCase, Device& device)
    : case_(checkCase), device_(device) {
  if (!device.hostAccessible()) staging_.resize(kStagingBytes);
}

ValuePattern BufferCheck::pattern(uint64_t seed) const {
  return ValuePattern(*case_.type,
                      case_.collective->reduces ? case_.op : nullptr,
                      case_.nranks, seed);
}

template <typename Generate>
void BufferCheck::writeRegion(void* region, size_t count,
                              const Generate& generate) {
  const size_t size = case_.type->size;
  char* bytes = static_cast<char*>(region);
  if (device_.hostAccessible()) {
    for (size_t k = 0; k < count; ++k) {
      encodeValue(*case_.type, generate(k), bytes + k * size);
    }
    return;
  }
  const size_t slice = staging_.size() / size;
  for (size_t first = 0; first < count; first += slice) {
    const size_t n = std::min(slice, count - first);
    for (size_t k = 0; k < n; ++k) {
      encodeValue(*case_.type, generate(first + k), &staging_[k * size]);
    }
    device_.copyToDevice(bytes + first * size, staging_.data(), n * size);
  }
}

template <typename Expect>
int64_t BufferCheck::countMismatches(const void* region, size_t count,
                                     const Expect& expect) {
  const size_t size = case_.type->size;
  const char* bytes = static_cast<const char*>(region);
  int64_t wrong = 0;
  auto compare = [&](const char* elements, size_t first, size_t n) {
    for (size_t k = 0; k < n; ++k) {
      const double got = decodeValue(*case_.type, elements + k * size);
      if (!ValuePattern::matches(got, expect(first + k))) ++wrong;
    }
  };
  if (device_.hostAccessible()) {
    compare(bytes, 0, count);
    return wrong;
  }
  const size_t slice = staging_.size() / size;
  for (size_t first = 0; first < count; first += slice) {
    const size_t n = std::min(slice, count - first);
    device_.copyToHost(staging_.data(), bytes + first * size, n * size);
    compare(staging_.data(), first, n);
  }
  return wrong;
}

void BufferCheck::prepare(bool inPlace, const Shape& shape, void* sendBase,
                          void* recvBase, uint64_t seed) {
  const ValuePattern values = pattern(seed);
  const int rank = case_.rank;
  auto input = [&](size_t k) { return values.value(rank, k); };
  auto poison = [](size_t) { return kPoison; };
  if (!inPlace) {
    writeRegion(sendBase, shape.sendCount, input);
    writeRegion(recvBase, shape.recvCount, poison);
    return;
  }
  const size_t perRank = shape.callCount;
  switch (case_.collective->kind) {
    case CollKind::kAllGather:
      // Only this rank's slot holds input; the rest must be overwritten.
      writeRegion(recvBase, shape.recvCount, [&](size_t k) {
        return k / perRank == static_cast<size_t>(rank) ? input(k % perRank)
                                                        : kPoison;
      });
      return;
    case CollKind::kBroadcast:
      if (rank == case_.root) {
        writeRegion(recvBase, shape.recvCount, input);
      } else {
        writeRegion(recvBase, shape.recvCount, poison);
      }
      return;
    default:
      writeRegion(recvBase, std::max(shape.sendCount, shape.recvCount), input);
      return;
  }
}

int64_t BufferCheck::countWrong(bool inPlace, const Shape& shape,
                                void* sendBase, void* recvBase, uint64_t seed) {
  const ValuePattern values = pattern(seed);
  const int rank = case_.rank;
  const int nranks = case_.nranks;
  const size_t perRank = shape.callCount;
  const size_t rankOffset = static_cast<size_t>(rank) * perRank;
  const void* result = callBuffers(case_.collective->kind, inPlace, sendBase,
                                   recvBase, shape, rank, case_.type->size)
                           .recv;
  auto exact = [](double value) { return Expected{value, 0}; };
  switch (case_.collective->kind) {
    case CollKind::kAllReduce:
      return countMismatches(result, shape.recvCount,
                             [&](size_t k) { return values.reduced(k); });
    case CollKind::kReduce:
      if (rank != case_.root) return 0;
      return countMismatches(result, shape.recvCount,
                             [&](size_t k) { return values.reduced(k); });
    case CollKind::kReduceScatter:
      return countMismatches(result, shape.recvCount, [&](size_t k) {
        return values.reduced(rankOffset + k);
      });
    case CollKind::kAllGather:
      return countMismatches(result, shape.recvCount, [&](size_t k) {
        return exact(values.value(static_cast<int>(k / perRank), k % perRank));
      });
    case CollKind::kBroadcast:
      return countMismatches(result, shape.recvCount, [&](size_t k) {
        return exact(values.value(case_.root, k));
      });
    case CollKind::kAllToAll:
      return countMismatches(result, shape.recvCount, [&](size_t k) {
        return exact(values.value(static_cast<int>(k / perRank),
                                  rankOffset + k % perRank));
      });
    case CollKind::kSendRecv:
      return countMismatches(result, shape.recvCount, [&](size_t k) {
        return exact(values.value((rank + nranks - 1) % nranks, k));
      });
  }
  return 0;
}

}  // namespace perf
}  // namespace hetccl
