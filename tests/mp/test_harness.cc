// The harness checks the library, so it is checked first: reference
// reductions, and the process runner's reporting of failures, timeouts and
// signals (the dtype conversions behind every expected value are the kit's,
// checked in tools/kit/test).
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
#include "harness/hash.h"
#include "harness/run_ranks.h"
#include "kit/dtype.h"

namespace hetccl::mp {
namespace {

// The reference accepts a result computed independently here, in each
// type's own arithmetic, and rejects one wrong element.
TEST(HarnessData, ReferenceMatchesIndependentReduction) {
  const int nranks = 5;
  const size_t count = 300;
  for (const kit::DataType& dataType : kit::allDataTypes()) {
    const ncclDataType_t type = dataType.nccl;
    for (TestOp op : allTestOps()) {
      ReduceSpec spec{type, op, nranks, 42};
      size_t size = dataType.size;
      std::vector<unsigned char> result(count * size);
      std::vector<unsigned char> element(8);
      for (size_t i = 0; i < count; ++i) {
        double acc = 0;
        for (int r = 0; r < nranks; ++r) {
          writeReduceInput(spec, r, i, element.data());
          double x = kit::decodeValue(dataType, element.data());
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
          acc = dataType.isFloat ? acc / nranks : std::floor(acc / nranks);
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
          kit::encodeValue(dataType, acc, &result[i * size]);
        }
      }
      std::string what = std::string(dataType.name) + " " + testOpName(op);
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
