#include "perf/buffer_check.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <thread>
#include <vector>

namespace hetccl {
namespace perf {
namespace {

// Host staging for GPU memory is used in slices of this size, so that a
// sweep to large sizes does not need a second full-size copy on the host.
constexpr size_t kStagingBytes = size_t{8} << 20;

constexpr double kPoison = std::numeric_limits<double>::quiet_NaN();

// Generating and comparing values costs tens of nanoseconds per element, so
// a check of every type and op at tens of megabytes would take minutes on
// one core: large ranges are split over a few threads.
constexpr size_t kElementsPerThread = size_t{1} << 16;
constexpr unsigned kMaxThreads = 8;

size_t threadsFor(size_t count) {
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  return std::max<size_t>(
      1, std::min({count / kElementsPerThread, cores, size_t{kMaxThreads}}));
}

// Joins its threads however the scope is left.
class ThreadGroup {
 public:
  ~ThreadGroup() {
    for (std::thread& thread : threads_) thread.join();
  }
  template <typename Body>
  void start(const Body& body, size_t first, size_t count) {
    threads_.emplace_back(body, first, count);
  }

 private:
  std::vector<std::thread> threads_;
};

// Calls body(first, n) for contiguous ranges that cover [0, count), on
// several threads when the range is large.
template <typename Body>
void forEachRange(size_t count, const Body& body) {
  const size_t threads = threadsFor(count);
  const size_t perThread = (count + threads - 1) / threads;
  {
    ThreadGroup group;
    for (size_t first = perThread; first < count; first += perThread) {
      group.start(body, first, std::min(perThread, count - first));
    }
    body(0, std::min(perThread, count));
  }
}

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
  const kit::DataType& type = *case_.type;
  // Encodes elements [first, first + n) of the region into `out`.
  auto encode = [&](char* out, size_t first, size_t n) {
    forEachRange(n, [&](size_t from, size_t m) {
      for (size_t k = from; k < from + m; ++k) {
        kit::encodeValue(type, generate(first + k), out + k * size);
      }
    });
  };
  if (device_.hostAccessible()) {
    encode(bytes, 0, count);
    return;
  }
  const size_t slice = staging_.size() / size;
  for (size_t first = 0; first < count; first += slice) {
    const size_t n = std::min(slice, count - first);
    encode(staging_.data(), first, n);
    device_.copyToDevice(bytes + first * size, staging_.data(), n * size);
  }
}

template <typename Expect>
int64_t BufferCheck::countMismatches(const void* region, size_t count,
                                     const Expect& expect) {
  const size_t size = case_.type->size;
  const char* bytes = static_cast<const char*>(region);
  std::atomic<int64_t> wrong{0};
  // Compares elements [first, first + n) of the region, held at `elements`.
  auto compare = [&](const char* elements, size_t first, size_t n) {
    forEachRange(n, [&](size_t from, size_t m) {
      int64_t mismatches = 0;
      for (size_t k = from; k < from + m; ++k) {
        const double got = kit::decodeValue(*case_.type, elements + k * size);
        if (!ValuePattern::matches(got, expect(first + k))) ++mismatches;
      }
      wrong += mismatches;
    });
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
    case CollKind::kGather:
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

void BufferCheck::fillForTiming(void* region, size_t bytes) {
  const size_t size = case_.type->size;
  const size_t count = bytes / size;
  if (count == 0) return;
  const ValuePattern values = pattern(0);
  std::vector<char> block(std::min(count, kStagingBytes / size) * size);
  for (size_t k = 0; k < block.size() / size; ++k) {
    kit::encodeValue(*case_.type, values.value(case_.rank, k),
                     &block[k * size]);
  }
  char* out = static_cast<char*>(region);
  const size_t total = count * size;
  for (size_t done = 0; done < total; done += block.size()) {
    device_.copyToDevice(out + done, block.data(),
                         std::min(block.size(), total - done));
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
    case CollKind::kAlltoAll:
      return countMismatches(result, shape.recvCount, [&](size_t k) {
        return exact(values.value(static_cast<int>(k / perRank),
                                  rankOffset + k % perRank));
      });
    case CollKind::kGather:
      if (rank != case_.root) return 0;
      return countMismatches(result, shape.recvCount, [&](size_t k) {
        return exact(values.value(static_cast<int>(k / perRank), k % perRank));
      });
    case CollKind::kScatter:
      return countMismatches(result, shape.recvCount, [&](size_t k) {
        return exact(values.value(case_.root, rankOffset + k));
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
