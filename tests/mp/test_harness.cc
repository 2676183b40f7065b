// The harness checks the library, so it is checked first: exact float
// conversions behind every expected value, reference reductions, and the
// process runner's reporting of failures, timeouts and signals.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "harness/check.h"
#include "harness/data.h"
#include "harness/dtype.h"
#include "harness/hash.h"
#include "harness/run_ranks.h"

namespace hetccl::mp {
namespace {

const ncclDataType_t kNarrowTypes[] = {ncclFloat16, ncclBfloat16,
                                       ncclFloat8e4m3, ncclFloat8e5m2};

uint32_t storedBits(double value, ncclDataType_t type) {
  uint32_t bits = 0;
  storeFromDouble(value, type, &bits);
  return bits;
}

TEST(HarnessDtype, KnownNarrowFloatValues) {
  EXPECT_EQ(storedBits(1.0, ncclFloat16), 0x3c00u);
  EXPECT_EQ(storedBits(-2.0, ncclFloat16), 0xc000u);
  EXPECT_EQ(storedBits(65504.0, ncclFloat16), 0x7bffu);
  EXPECT_EQ(storedBits(1.0, ncclBfloat16), 0x3f80u);
  EXPECT_EQ(storedBits(1.0, ncclFloat8e4m3), 0x38u);
  EXPECT_EQ(storedBits(448.0, ncclFloat8e4m3), 0x7eu);
  EXPECT_EQ(storedBits(1.0, ncclFloat8e5m2), 0x3cu);
  EXPECT_EQ(storedBits(57344.0, ncclFloat8e5m2), 0x7bu);
  // Smallest subnormals.
  EXPECT_EQ(storedBits(std::ldexp(1.0, -24), ncclFloat16), 0x0001u);
  EXPECT_EQ(storedBits(std::ldexp(1.0, -9), ncclFloat8e4m3), 0x01u);
  EXPECT_EQ(storedBits(std::ldexp(1.0, -16), ncclFloat8e5m2), 0x01u);
  uint8_t e4m3Nan = 0x7f;
  EXPECT_TRUE(std::isnan(loadAsDouble(&e4m3Nan, ncclFloat8e4m3)));
  uint8_t e5m2Inf = 0x7c;
  EXPECT_TRUE(std::isinf(loadAsDouble(&e5m2Inf, ncclFloat8e5m2)));
}

TEST(HarnessDtype, RoundsHalfToEven) {
  // 1 + 2^-11 lies halfway between fp16's 1 and 1 + 2^-10: even wins.
  EXPECT_EQ(storedBits(1.0 + std::ldexp(1.0, -11), ncclFloat16), 0x3c00u);
  EXPECT_EQ(storedBits(1.0 + 3 * std::ldexp(1.0, -11), ncclFloat16), 0x3c02u);
  // e5m2 between 1.75 and 2: rounds up into the next exponent.
  EXPECT_EQ(storedBits(1.875, ncclFloat8e5m2), 0x40u);
}

TEST(HarnessDtype, EveryFiniteNarrowPatternRoundTrips) {
  for (ncclDataType_t type : kNarrowTypes) {
    uint32_t patterns = dataTypeSize(type) == 1 ? 256 : 65536;
    for (uint32_t bits = 0; bits < patterns; ++bits) {
      double value = loadAsDouble(&bits, type);
      if (std::isnan(value)) continue;
      ASSERT_EQ(storedBits(value, type), bits)
          << dataTypeName(type) << " pattern " << bits << " = " << value;
    }
  }
}

TEST(HarnessDtype, ExactIntegerLimitIsExact) {
  for (ncclDataType_t type : kNarrowTypes) {
    double limit = exactIntegerLimit(type);
    for (double v = -limit; v <= limit; v += 1) {
      uint32_t bits = storedBits(v, type);
      ASSERT_EQ(loadAsDouble(&bits, type), v) << dataTypeName(type);
    }
    uint32_t bits = storedBits(limit + 1, type);
    EXPECT_NE(loadAsDouble(&bits, type), limit + 1) << dataTypeName(type);
  }
}

// The reference accepts a result computed independently here, in each
// type's own arithmetic, and rejects one wrong element.
TEST(HarnessData, ReferenceMatchesIndependentReduction) {
  const int nranks = 5;
  const size_t count = 300;
  for (ncclDataType_t type : allDataTypes()) {
    for (TestOp op : allTestOps()) {
      ReduceSpec spec{type, op, nranks, 42};
      size_t size = dataTypeSize(type);
      std::vector<unsigned char> result(count * size);
      std::vector<unsigned char> element(8);
      for (size_t i = 0; i < count; ++i) {
        double acc = 0;
        for (int r = 0; r < nranks; ++r) {
          writeReduceInput(spec, r, i, element.data());
          double x = loadAsDouble(element.data(), type);
          if (isPreMulSum(op)) x *= preMulSumScalar(type);
          if (r == 0) {
            acc = x;
          } else if (op == TestOp::kProd) {
            acc *= x;
          } else if (op == TestOp::kMax) {
            acc = std::max(acc, x);
          } else if (op == TestOp::kMin) {
            acc = std::min(acc, x);
          } else {
            acc += x;
          }
        }
        if (op == TestOp::kAvg) {
          acc = isFloatType(type) ? acc / nranks : std::floor(acc / nranks);
        }
        bool fullRangeInt = (op == TestOp::kMax || op == TestOp::kMin) &&
                            (type == ncclInt64 || type == ncclUint64);
        if (fullRangeInt) {
          // Doubles cannot hold these: copy the winning input instead.
          unsigned char best[8];
          writeReduceInput(spec, 0, i, best);
          for (int r = 1; r < nranks; ++r) {
            writeReduceInput(spec, r, i, element.data());
            bool greater = type == ncclInt64
                               ? *reinterpret_cast<int64_t*>(element.data()) >
                                     *reinterpret_cast<int64_t*>(best)
                               : *reinterpret_cast<uint64_t*>(element.data()) >
                                     *reinterpret_cast<uint64_t*>(best);
            if (greater == (op == TestOp::kMax)) {
              std::memcpy(best, element.data(), 8);
            }
          }
          std::memcpy(&result[i * size], best, 8);
        } else {
          storeFromDouble(acc, type, &result[i * size]);
        }
      }
      std::string what = std::string(dataTypeName(type)) + " " + testOpName(op);
      EXPECT_EQ(checkReduceResult(spec, 0, count, result.data()), "") << what;
      // A high bit: outside any tolerance.
      result[(count / 2) * size + size - 1] ^= 0x40;
      EXPECT_NE(checkReduceResult(spec, 0, count, result.data()), "") << what;
    }
  }
}

TEST(HarnessData, PatternBytesDependOnRankAndOffset) {
  std::vector<unsigned char> a(100), b(100);
  fillPatternBytes(7, 0, 0, a.size(), a.data());
  fillPatternBytes(7, 1, 0, b.size(), b.data());
  EXPECT_NE(a, b);
  fillPatternBytes(7, 0, 30, b.size() - 30, b.data());
  EXPECT_TRUE(std::equal(b.begin(), b.begin() + 70, a.begin() + 30));
  EXPECT_EQ(checkPatternBytes(7, 0, 30, 70, b.data()), "");
  b[5] ^= 1;
  EXPECT_NE(checkPatternBytes(7, 0, 30, 70, b.data()), "");
  EXPECT_NE(hashBytes(a.data(), 0), hashBytes(a.data(), 1));
}

RunOptions noLibrary() {
  RunOptions options;
  options.createUniqueId = false;
  options.timeoutSeconds = 20;
  return options;
}

TEST(HarnessRunner, ExchangeGivesEveryRankEveryonesBytes) {
  RunReport report = runRanks(
      4,
      [](RankContext& ctx) {
        for (int round = 0; round < 3; ++round) {
          std::string mine(ctx.rank() + round,
                           static_cast<char>('a' + ctx.rank()));
          std::vector<std::string> all = ctx.exchange(mine);
          for (int r = 0; r < ctx.nranks(); ++r) {
            MP_CHECK(all[r] ==
                     std::string(r + round, static_cast<char>('a' + r)))
                << "round " << round << " rank " << r;
          }
        }
        ctx.checkSameOnAllRanks({1, 2, 3}, [](size_t) { return "constant"; });
      },
      noLibrary());
  EXPECT_TRUE(report.ok);
}

TEST(HarnessRunner, ReportsAFailedCheckWithItsMessage) {
  EXPECT_NONFATAL_FAILURE(runRanks(
                              2,
                              [](RankContext& ctx) {
                                MP_CHECK(ctx.rank() != 1)
                                    << "the message from rank one";
                              },
                              noLibrary()),
                          "the message from rank one");
}

// The gtest failures `body` adds, captured instead of reported.
std::vector<std::string> failuresOf(const std::function<void()>& body) {
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::
            INTERCEPT_ONLY_CURRENT_THREAD,
        &results);
    body();
  }
  std::vector<std::string> messages;
  for (int i = 0; i < results.size(); ++i) {
    messages.push_back(results.GetTestPartResult(i).message());
  }
  return messages;
}

TEST(HarnessRunner, ReportsRanksThatDisagree) {
  std::vector<std::string> failures = failuresOf([] {
    runRanks(
        3,
        [](RankContext& ctx) {
          ctx.checkSameOnAllRanks(
              {5, uint64_t(ctx.rank() == 2 ? 9 : 6)},
              [](size_t i) { return "item " + std::to_string(i); });
        },
        noLibrary());
  });
  // Every rank sees the disagreement and names the item.
  ASSERT_EQ(failures.size(), 3u);
  for (const std::string& failure : failures) {
    EXPECT_NE(failure.find("in item 1"), std::string::npos) << failure;
  }
}

TEST(HarnessRunner, KillsRanksThatOutliveTheTimeout) {
  RunOptions options = noLibrary();
  options.timeoutSeconds = 1;
  RunReport report;
  EXPECT_NONFATAL_FAILURE(report = runRanks(
                              2,
                              [](RankContext& ctx) {
                                if (ctx.rank() == 0) ::sleep(30);
                              },
                              options),
                          "still running at the deadline");
  EXPECT_LT(report.seconds, 10);
}

TEST(HarnessRunner, ExpectedSignalIsNotAFailure) {
  RunOptions options = noLibrary();
  options.expectedSignals[1] = SIGKILL;
  RunReport report = runRanks(
      2,
      [](RankContext& ctx) {
        if (ctx.rank() == 1) ::kill(::getpid(), SIGKILL);
      },
      options);
  EXPECT_TRUE(report.ok);
  EXPECT_TRUE(report.ranks[1].signaled);
}

TEST(HarnessRunner, PassesEnvironmentToChildren) {
  RunOptions options = noLibrary();
  options.env["HETCCL_MP_HARNESS_TEST"] = "common";
  options.rankEnv = [](int rank) {
    return std::map<std::string, std::string>{
        {"HETCCL_MP_HARNESS_RANK", std::to_string(rank)}};
  };
  RunReport report = runRanks(
      2,
      [](RankContext& ctx) {
        const char* common = std::getenv("HETCCL_MP_HARNESS_TEST");
        const char* rank = std::getenv("HETCCL_MP_HARNESS_RANK");
        MP_CHECK(common && std::string(common) == "common");
        MP_CHECK(rank && std::string(rank) == std::to_string(ctx.rank()));
      },
      options);
  EXPECT_TRUE(report.ok);
}

}  // namespace
}  // namespace hetccl::mp
