// HostPlanData cuts large copies and reductions into element ranges shared
// with helper threads: the results must be those of one thread, bitwise,
// whatever the count (odd, around the 1 MiB part size, not a multiple of a
// cache line) and the number of threads; a part's exception reaches the
// caller, and the threads take job after job.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "engine/host/host_plan_data.h"
#include "runtime/host/helper_threads.h"
#include "runtime/host/host_reduce.h"
#include "util/error.h"

namespace hetccl {
namespace {

// memcmp of two byte ranges that may be empty (and then null).
bool sameBytes(const void* a, const void* b, size_t bytes) {
  return bytes == 0 || std::memcmp(a, b, bytes) == 0;
}

std::vector<float> pattern(size_t count, float seed) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i)
    values[i] = seed + static_cast<float>(i % 977) * 0.37f;
  return values;
}

// Counts around the part size and odd ones, in float32 elements.
const size_t kCounts[] = {0,      1,      15,      262143, 262144,
                          262145, 786433, 1048583, 3000001};

TEST(HostPlanData, ReductionsInPartsEqualOneThreadBitwise) {
  for (int threads : {1, 2, 3, 4}) {
    HostPlanData data(threads - 1);
    for (size_t count : kCounts) {
      auto a = pattern(count, 1.5f), b = pattern(count, -0.25f);
      const void* sources[] = {a.data(), b.data()};
      Reduction sum;
      sum.dtype = ncclFloat32;
      std::vector<float> expected(count), got(count, -1.0f);
      hostReduce(expected.data(), sources, 2, count, sum);
      data.reduce(got.data(), sources, 2, count, sum);
      ASSERT_TRUE(sameBytes(expected.data(), got.data(), count * sizeof(float)))
          << threads << " threads, " << count << " elements";
    }
  }
}

TEST(HostPlanData, CopiesInPartsCoverEveryByteAndNoMore) {
  HostPlanData data(3);
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{1 << 20} - 1,
                       size_t{1 << 20} * 3 + 7, size_t{5 << 20} + 13}) {
    std::vector<uint8_t> src(bytes), dst(bytes + 1, 0xEE);
    for (size_t i = 0; i < bytes; ++i) src[i] = static_cast<uint8_t>(i * 7);
    data.copy(dst.data(), src.data(), bytes);
    ASSERT_TRUE(sameBytes(dst.data(), src.data(), bytes)) << bytes;
    EXPECT_EQ(0xEE, dst[bytes]) << "wrote past the end at " << bytes;
  }
}

TEST(HelperThreads, EveryPartRunsOnceJobAfterJob) {
  HelperThreads helpers(3);
  ASSERT_EQ(4, helpers.parts());
  for (int job = 0; job < 200; ++job) {
    const int parts = 1 + job % 4;
    std::vector<std::atomic<int>> runs(4);
    helpers.run(parts, [&](int part) { runs[part]++; });
    for (int part = 0; part < 4; ++part)
      ASSERT_EQ(part < parts ? 1 : 0, runs[part].load())
          << "job " << job << " part " << part;
  }
}

TEST(HelperThreads, AHelpersExceptionReachesTheCaller) {
  HelperThreads helpers(2);
  EXPECT_THROW(helpers.run(3,
                           [](int part) {
                             if (part == 2) throw std::runtime_error("part 2");
                           }),
               std::runtime_error);
  // The threads still serve the next job.
  std::atomic<int> runs{0};
  helpers.run(3, [&](int) { runs++; });
  EXPECT_EQ(3, runs.load());
}

}  // namespace
}  // namespace hetccl

namespace hetccl {
namespace {

TEST(HelperThreads, MorePartsThanThreadsIsRefused) {
  HelperThreads helpers(1);
  EXPECT_THROW(helpers.run(3, [](int) {}), Error);
}

}  // namespace
}  // namespace hetccl
