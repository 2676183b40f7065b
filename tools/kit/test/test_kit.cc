// Tests of the kit that hetccl-perf, the multi-process tests and the peer
// benchmarks share: the element types and their exact conversions, the size
// parser, and the fork launcher's reports of exits, crashes and timeouts.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "kit/byte_size.h"
#include "kit/dtype.h"
#include "kit/launcher.h"
#include "kit/temp_dir.h"

extern char** environ;

namespace hetccl::kit {
namespace {

const DataType& type(const char* name) { return *findDataType(name); }

uint32_t encodeBits(const DataType& t, double value) {
  uint64_t bits = 0;
  encodeValue(t, value, &bits);
  return static_cast<uint32_t>(bits);
}

double decodeBits(const DataType& t, uint32_t bits) {
  uint64_t wide = bits;
  return decodeValue(t, &wide);
}

double roundToType(const DataType& t, double value) {
  char bytes[8];
  encodeValue(t, value, bytes);
  return decodeValue(t, bytes);
}

struct ExpectedType {
  ncclDataType_t nccl;
  const char* name;
  size_t size;
  bool isFloat;
  bool isSigned;
};

TEST(DataTypes, TableHasEveryNcclType) {
  const ExpectedType expected[] = {
      {ncclInt8, "int8", 1, false, true},
      {ncclUint8, "uint8", 1, false, false},
      {ncclInt32, "int32", 4, false, true},
      {ncclUint32, "uint32", 4, false, false},
      {ncclInt64, "int64", 8, false, true},
      {ncclUint64, "uint64", 8, false, false},
      {ncclFloat16, "float16", 2, true, true},
      {ncclFloat32, "float32", 4, true, true},
      {ncclFloat64, "float64", 8, true, true},
      {ncclBfloat16, "bfloat16", 2, true, true},
      {ncclFloat8e4m3, "fp8e4m3", 1, true, true},
      {ncclFloat8e5m2, "fp8e5m2", 1, true, true},
  };
  ASSERT_EQ(allDataTypes().size(), static_cast<size_t>(ncclNumTypes));
  for (size_t i = 0; i < allDataTypes().size(); ++i) {
    const DataType& t = allDataTypes()[i];
    EXPECT_EQ(t.nccl, static_cast<ncclDataType_t>(i));
    EXPECT_EQ(t.nccl, expected[i].nccl);
    EXPECT_STREQ(t.name, expected[i].name);
    EXPECT_EQ(t.size, expected[i].size) << t.name;
    EXPECT_EQ(t.isFloat, expected[i].isFloat) << t.name;
    EXPECT_EQ(t.isSigned, expected[i].isSigned) << t.name;
    EXPECT_EQ(t.unitRoundoff > 0, t.isFloat) << t.name;
    EXPECT_EQ(&dataTypeOf(t.nccl), &t);
    EXPECT_EQ(findDataType(t.name), &t);
  }
}

TEST(DataTypes, NamesAndAliases) {
  EXPECT_EQ(findDataType("float")->nccl, ncclFloat32);
  EXPECT_EQ(findDataType("half")->nccl, ncclFloat16);
  EXPECT_EQ(findDataType("bf16")->nccl, ncclBfloat16);
  EXPECT_EQ(findDataType("double")->nccl, ncclFloat64);
  EXPECT_EQ(findDataType("e4m3")->nccl, ncclFloat8e4m3);
  EXPECT_EQ(findDataType("e5m2")->nccl, ncclFloat8e5m2);
  EXPECT_EQ(findDataType("char")->nccl, ncclInt8);
  EXPECT_EQ(findDataType("nope"), nullptr);
  EXPECT_THROW(dataTypeOf(ncclNumTypes), std::invalid_argument);
}

TEST(DataTypes, SmallFloatsRoundTripEveryBitPattern) {
  for (const char* name : {"float16", "bfloat16", "fp8e4m3", "fp8e5m2"}) {
    const DataType& t = type(name);
    const uint32_t patterns = 1u << (8 * t.size);
    for (uint32_t bits = 0; bits < patterns; ++bits) {
      const double value = decodeBits(t, bits);
      if (std::isnan(value)) continue;
      EXPECT_EQ(encodeBits(t, value), bits) << name << " value " << value;
    }
  }
}

TEST(DataTypes, KnownEncodings) {
  EXPECT_EQ(encodeBits(type("fp8e4m3"), 448), 0x7Eu);
  EXPECT_EQ(encodeBits(type("fp8e4m3"), 1), 0x38u);
  EXPECT_EQ(encodeBits(type("fp8e4m3"), 1000), 0x7Fu);  // no Inf: NaN
  EXPECT_EQ(encodeBits(type("fp8e5m2"), 57344), 0x7Bu);
  EXPECT_EQ(encodeBits(type("fp8e5m2"), -2), 0xC0u);
  EXPECT_EQ(encodeBits(type("float16"), 65504), 0x7BFFu);
  EXPECT_EQ(encodeBits(type("float16"), 1e6), 0x7C00u);  // Inf
  EXPECT_EQ(encodeBits(type("bfloat16"), 1), 0x3F80u);
  // Ties round to even.
  EXPECT_EQ(encodeBits(type("float16"), 1 + std::ldexp(1, -11)), 0x3C00u);
  EXPECT_EQ(encodeBits(type("float16"), 1 + 3 * std::ldexp(1, -11)), 0x3C02u);
  EXPECT_EQ(decodeBits(type("fp8e4m3"), 0x01), std::ldexp(1, -9));
  EXPECT_TRUE(std::isnan(decodeBits(type("fp8e4m3"), 0x7F)));
  EXPECT_EQ(encodeBits(type("int8"), -5), 0xFBu);
  EXPECT_EQ(decodeBits(type("uint8"), 0xFB), 251);
}

TEST(DataTypes, LimitsAreExact) {
  for (const DataType& t : allDataTypes()) {
    const int64_t limit = std::min<int64_t>(t.exactLimit, 1 << 20);
    for (int64_t x = t.isSigned ? -limit : 0; x <= limit; ++x) {
      ASSERT_EQ(roundToType(t, static_cast<double>(x)), x) << t.name;
    }
    const double power = std::ldexp(1.0, t.maxPow2);
    EXPECT_EQ(roundToType(t, power), power) << t.name;
  }
}

TEST(DataTypes, PoisonIsNeverAPlausibleResult) {
  for (const DataType& t : allDataTypes()) {
    const double poison = roundToType(t, NAN);
    if (t.isFloat) {
      EXPECT_TRUE(std::isnan(poison)) << t.name;
    } else {
      EXPECT_GT(poison, 100) << t.name;
    }
  }
}

TEST(DataTypes, SubnormalsAndSpecials) {
  EXPECT_EQ(encodeBits(type("float16"), std::ldexp(1.0, -24)), 0x0001u);
  EXPECT_EQ(encodeBits(type("fp8e4m3"), std::ldexp(1.0, -9)), 0x01u);
  EXPECT_EQ(encodeBits(type("fp8e5m2"), std::ldexp(1.0, -16)), 0x01u);
  for (const DataType& t : allDataTypes()) {
    if (t.isFloat) {
      EXPECT_EQ(roundToType(t, t.smallestPositive), t.smallestPositive)
          << t.name;
    }
  }
  EXPECT_TRUE(std::isinf(decodeBits(type("fp8e5m2"), 0x7C)));
  EXPECT_TRUE(std::isinf(decodeBits(type("bfloat16"), 0x7F80)));
  // Rounding up from fp8e5m2's largest mantissa carries into the exponent.
  EXPECT_EQ(encodeBits(type("fp8e5m2"), 1.875), 0x40u);
}

TEST(ByteSize, PlainNumbersAndSuffixes) {
  EXPECT_EQ(parseByteSize("0"), size_t{0});
  EXPECT_EQ(parseByteSize("4096"), size_t{4096});
  EXPECT_EQ(parseByteSize("8B"), size_t{8});
  EXPECT_EQ(parseByteSize("64K"), size_t{64} << 10);
  EXPECT_EQ(parseByteSize("64k"), size_t{64} << 10);
  EXPECT_EQ(parseByteSize("16M"), size_t{16} << 20);
  EXPECT_EQ(parseByteSize("16MB"), size_t{16} << 20);
  EXPECT_EQ(parseByteSize("1G"), size_t{1} << 30);
  EXPECT_EQ(parseByteSize("1gb"), size_t{1} << 30);
  EXPECT_EQ(parseByteSize("2T"), size_t{2} << 40);
}

TEST(ByteSize, RejectsGarbage) {
  for (const char* text : {"", "K", "-1", "+1", " 1", "1 ", "1X", "1KK", "1KBB",
                           "1.5M", "0x10", "12abc"}) {
    EXPECT_FALSE(parseByteSize(text).has_value()) << "'" << text << "'";
  }
}

TEST(ByteSize, RejectsOverflow) {
  const size_t max = std::numeric_limits<size_t>::max();
  EXPECT_EQ(parseByteSize(std::to_string(max)), max);
  EXPECT_FALSE(parseByteSize(std::to_string(max) + "0").has_value());
  EXPECT_FALSE(parseByteSize("99999999999999999999999").has_value());
  EXPECT_EQ(parseByteSize("16777215T"), size_t{16777215} << 40);
  EXPECT_FALSE(parseByteSize("16777216T").has_value());
  EXPECT_FALSE(parseByteSize(std::to_string(max >> 9) + "K").has_value());
}

LaunchOptions optionsFor(int nranks, double timeoutSeconds = 0) {
  LaunchOptions options;
  options.nranks = nranks;
  options.timeoutSeconds = timeoutSeconds;
  return options;
}

TEST(Launcher, CollectsEveryExitStatus) {
  LaunchOptions options = optionsFor(3);
  // Every end is expected here, so no rank is stopped early.
  options.isExpected = [](int, const RankExit&) { return true; };
  const LaunchReport report =
      launchRanks(options, [](int rank) { return rank * 10; });
  ASSERT_EQ(report.ranks.size(), 3u);
  EXPECT_TRUE(report.ok());
  for (int rank = 0; rank < 3; ++rank) {
    const RankExit& exit = report.ranks[rank];
    EXPECT_TRUE(exit.exited);
    EXPECT_FALSE(exit.stopped);
    EXPECT_EQ(exit.code, rank * 10);
    EXPECT_EQ(exit.shellStatus(), rank * 10);
    EXPECT_GT(exit.pid, 0);
  }
  EXPECT_EQ(report.ranks[2].describe(), "exited with status 20");
}

TEST(Launcher, AFailedRankStopsTheOthersAndIsNamed) {
  LaunchOptions options = optionsFor(3, 60);
  const LaunchReport report = launchRanks(options, [](int rank) {
    if (rank == 1) return 7;
    ::sleep(60);
    return 0;
  });
  EXPECT_FALSE(report.ok());
  EXPECT_FALSE(report.timedOut);
  EXPECT_EQ(report.firstUnexpectedRank, 1);
  EXPECT_EQ(report.ranks[1].code, 7);
  EXPECT_FALSE(report.ranks[1].stopped);
  EXPECT_TRUE(report.ranks[0].stopped);
  EXPECT_TRUE(report.ranks[2].stopped);
  EXPECT_LT(report.seconds, 30);
}

TEST(Launcher, ReportsACrashingRank) {
  LaunchOptions options = optionsFor(2, 60);
  const LaunchReport report = launchRanks(options, [](int rank) {
    if (rank == 0) {
      // The default action, not a sanitizer's handler (which would report
      // and exit with a status instead of dying by the signal).
      ::signal(SIGSEGV, SIG_DFL);
      ::raise(SIGSEGV);
    }
    return 0;
  });
  EXPECT_EQ(report.firstUnexpectedRank, 0);
  const RankExit& crashed = report.ranks[0];
  EXPECT_TRUE(crashed.signaled);
  EXPECT_EQ(crashed.signal, SIGSEGV);
  EXPECT_EQ(crashed.shellStatus(), 128 + SIGSEGV);
  EXPECT_NE(crashed.describe().find("killed by signal 11"), std::string::npos)
      << crashed.describe();
}

TEST(Launcher, AnEscapedExceptionExitsWithOne) {
  LaunchOptions options = optionsFor(1);
  const LaunchReport report = launchRanks(
      options, [](int) -> int { throw std::runtime_error("from the rank"); });
  EXPECT_TRUE(report.ranks[0].exited);
  EXPECT_EQ(report.ranks[0].code, 1);
}

TEST(Launcher, TimeoutStopsEveryRankStillRunning) {
  LaunchOptions options = optionsFor(2);
  options.timeoutSeconds = 0.5;
  options.terminateGraceSeconds = 1;
  const LaunchReport report = launchRanks(options, [](int rank) {
    if (rank == 1) ::sleep(60);
    return 0;
  });
  EXPECT_TRUE(report.timedOut);
  EXPECT_FALSE(report.ok());
  EXPECT_EQ(report.firstUnexpectedRank, -1);
  EXPECT_TRUE(report.ranks[0].succeeded());
  EXPECT_TRUE(report.ranks[1].stopped);
  // SIGTERM ended it within the grace; SIGKILL was not needed.
  EXPECT_EQ(report.ranks[1].signal, SIGTERM);
  EXPECT_NE(report.ranks[1].describe().find("still running"),
            std::string::npos);
  EXPECT_LT(report.seconds, 10);
}

TEST(Launcher, GraceLetsTheOthersFinishAfterAFailure) {
  LaunchOptions options = optionsFor(2);
  options.graceAfterFailureSeconds = 30;
  const LaunchReport report = launchRanks(options, [](int rank) {
    if (rank == 0) return 3;
    ::usleep(200 * 1000);
    return 0;
  });
  EXPECT_EQ(report.firstUnexpectedRank, 0);
  EXPECT_TRUE(report.ranks[1].succeeded());
  EXPECT_FALSE(report.ranks[1].stopped);
}

TEST(Launcher, StopRequestStopsTheRanks) {
  LaunchOptions options = optionsFor(2);
  options.stopRequested = [] { return true; };
  const LaunchReport report = launchRanks(options, [](int) {
    ::sleep(60);
    return 0;
  });
  EXPECT_TRUE(report.stopRequested);
  EXPECT_TRUE(report.ranks[0].stopped);
  EXPECT_EQ(report.ranks[0].signal, SIGKILL);
}

TEST(Launcher, EveryRankGetsItsOwnEnvironment) {
  ::setenv("HETCCL_KIT_TEST_STALE", "outer", 1);
  ::setenv("HETCCL_KIT_TEST_SHARED", "outer", 1);
  LaunchOptions options = optionsFor(3);
  options.droppedPrefixes = {"HETCCL_KIT_TEST_ST"};
  options.rankEnvironment = [](int rank) {
    return std::map<std::string, std::string>{
        {"HETCCL_KIT_TEST_RANK", std::to_string(rank)},
        {"HETCCL_KIT_TEST_SHARED", "inner"}};
  };
  const LaunchReport report = launchRanks(options, [](int rank) {
    const char* own = std::getenv("HETCCL_KIT_TEST_RANK");
    const char* shared = std::getenv("HETCCL_KIT_TEST_SHARED");
    const bool right = own && std::to_string(rank) == own && shared &&
                       std::string(shared) == "inner" &&
                       std::getenv("HETCCL_KIT_TEST_STALE") == nullptr;
    return right ? 0 : 1;
  });
  ::unsetenv("HETCCL_KIT_TEST_STALE");
  ::unsetenv("HETCCL_KIT_TEST_SHARED");
  EXPECT_TRUE(report.ok());
}

TEST(Launcher, EnvironmentReachesAnExecutedProgram) {
  LaunchOptions options = optionsFor(2);
  options.rankEnvironment = [](int rank) {
    return std::map<std::string, std::string>{
        {"HETCCL_KIT_TEST_CODE", std::to_string(rank + 40)}};
  };
  options.isExpected = [](int, const RankExit&) { return true; };
  const LaunchReport report = launchRanks(options, [](int) {
    char shell[] = "/bin/sh";
    char flag[] = "-c";
    char script[] = "exit $HETCCL_KIT_TEST_CODE";
    char* argv[] = {shell, flag, script, nullptr};
    ::execve(shell, argv, environ);
    return 127;
  });
  EXPECT_EQ(report.ranks[0].code, 40);
  EXPECT_EQ(report.ranks[1].code, 41);
}

TEST(Launcher, WhileRunningSeesEveryRank) {
  LaunchOptions options = optionsFor(2);
  std::vector<pid_t> seen;
  options.whileRunning = [&](const std::vector<pid_t>& pids) { seen = pids; };
  const LaunchReport report = launchRanks(options, [](int) { return 0; });
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], report.ranks[0].pid);
  EXPECT_EQ(seen[1], report.ranks[1].pid);
}

TEST(TempDir, IsMadeAndRemoved) {
  std::string path;
  {
    TempDir dir("hetccl-kit-test-");
    path = dir.path();
    EXPECT_TRUE(std::filesystem::is_directory(path));
    std::filesystem::create_directory(path + "/inside");
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace hetccl::kit
