// The parameters and their parsers: every type, empty = unset, the alias
// rule, the messages of values a parameter does not accept, and the list
// the components' declarations make together.
#include "util/params.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "core/all_params.h"
#include "core/settings.h"
#include "support/expect_error.h"
#include "support/scoped_env.h"

namespace hetccl {
namespace {

std::string settingsRejection() {
  Error e = expectError([&] { Settings::fromEnvironment(); });
  EXPECT_EQ(e.code(), ncclInvalidArgument);
  return e.what();
}

TEST(Params, SizesTakeSuffixes) {
  int64_t value = 0;
  EXPECT_TRUE(parseSize("123", &value));
  EXPECT_EQ(value, 123);
  EXPECT_TRUE(parseSize("4K", &value));
  EXPECT_EQ(value, 4096);
  EXPECT_TRUE(parseSize("16m", &value));
  EXPECT_EQ(value, 16 << 20);
  EXPECT_TRUE(parseSize("1GB", &value));
  EXPECT_EQ(value, int64_t{1} << 30);
  EXPECT_TRUE(parseSize("8191G", &value));
  EXPECT_EQ(value, int64_t{8191} << 30);
  for (const char* bad : {"", "K", "-5", "+5", " 5", "5 ", "0x10", "4KK", "4T",
                          "1.5M", "99999999999999999999"})
    EXPECT_FALSE(parseSize(bad, &value)) << bad;
}

// 17179869185G is 2^63 + 2^30 bytes: the scaled value would overflow.
TEST(Params, SizeOverflowIsRejected) {
  int64_t value = 0;
  EXPECT_FALSE(parseSize("17179869185G", &value));
  EXPECT_FALSE(parseSize("9223372036854775807K", &value));
  ScopedEnv chunk("HETCCL_SHM_CHUNK", "17179869185G");
  EXPECT_EQ(settingsRejection(),
            "HETCCL_SHM_CHUNK=\"17179869185G\": expected a size from 4K to 1G");
}

TEST(Params, IntegersAndSeconds) {
  int64_t integer = 0;
  EXPECT_TRUE(parseInteger("-12", &integer));
  EXPECT_EQ(integer, -12);
  EXPECT_FALSE(parseInteger("12K", &integer));
  EXPECT_FALSE(parseInteger("1e3", &integer));
  double seconds = 0;
  EXPECT_TRUE(parseSeconds("2.5", &seconds));
  EXPECT_DOUBLE_EQ(seconds, 2.5);
  EXPECT_TRUE(parseSeconds("1e3", &seconds));
  EXPECT_DOUBLE_EQ(seconds, 1000);
  for (const char* bad : {"", "nan", "NaN", "inf", "-inf", "1e400", "5s", " 5"})
    EXPECT_FALSE(parseSeconds(bad, &seconds)) << bad;
}

TEST(Params, NanAndHugeTimeoutsFailInsteadOfMeaningForever) {
  for (const char* bad : {"nan", "1e400", "-1", "31536001"}) {
    ScopedEnv timeout("HETCCL_TIMEOUT", bad);
    EXPECT_EQ(settingsRejection(),
              std::string("HETCCL_TIMEOUT=\"") + bad +
                  "\": expected seconds from 0 to 31536000");
  }
}

TEST(Params, DefaultsApplyWhenUnsetOrEmpty) {
  ScopedEnv chunk("HETCCL_SHM_CHUNK", "");
  ScopedEnv transport("HETCCL_TRANSPORT", "");
  ScopedEnv hostId("HETCCL_HOSTID", "");
  ScopedEnv timeout("HETCCL_BOOTSTRAP_TIMEOUT", nullptr);
  ScopedEnv direct("HETCCL_GPU_DIRECT", nullptr);
  Settings s = Settings::fromEnvironment();
  EXPECT_EQ(s.backends.host.chunkBytes, 512u << 10);
  EXPECT_EQ(s.transports.selection, "");
  EXPECT_FALSE(s.hostId.has_value());
  EXPECT_DOUBLE_EQ(s.bootstrap.timeoutSeconds, 300);
  EXPECT_TRUE(s.gpuEngine.direct);
}

TEST(Params, SetValuesReachTheSettings) {
  ScopedEnv chunk("HETCCL_SHM_CHUNK", "1M");
  ScopedEnv sockets("HETCCL_TCP_SOCKETS", "16");
  ScopedEnv timeout("HETCCL_TIMEOUT", "0.25");
  ScopedEnv direct("HETCCL_GPU_DIRECT", "0");
  ScopedEnv hostId("HETCCL_HOSTID", "rack7");
  Settings s = Settings::fromEnvironment();
  EXPECT_EQ(s.backends.host.chunkBytes, 1u << 20);
  EXPECT_EQ(s.transports.tcp.socketsPerLink, 16);
  EXPECT_DOUBLE_EQ(s.timeoutSeconds, 0.25);
  EXPECT_FALSE(s.gpuEngine.direct);
  EXPECT_EQ(s.hostId, "rack7");
}

TEST(Params, OutOfRangeValuesAreRejectedNotClamped) {
  struct Case {
    const char* name;
    const char* value;
    const char* message;
  } cases[] = {
      {"HETCCL_SHM_CHUNK", "-5",
       "HETCCL_SHM_CHUNK=\"-5\": expected a size from 4K to 1G"},
      {"HETCCL_CHUNK", "1",
       "HETCCL_CHUNK=\"1\": expected a size from 4K to 1G"},
      {"HETCCL_GPU_CHUNK", "-1",
       "HETCCL_GPU_CHUNK=\"-1\": expected a size from 4K to 1G"},
      {"HETCCL_SHM_CHUNK", "4611686018427387904",
       "HETCCL_SHM_CHUNK=\"4611686018427387904\": expected a size from 4K to "
       "1G"},
      {"HETCCL_TCP_SOCKETS", "17",
       "HETCCL_TCP_SOCKETS=\"17\": expected an integer from 0 to 16"},
      {"HETCCL_GPU_DIRECT", "yes",
       "HETCCL_GPU_DIRECT=\"yes\": expected 0 or 1"},
  };
  for (const Case& c : cases) {
    ScopedEnv bad(c.name, c.value);
    Error e = expectError([&] { Settings::fromEnvironment(); });
    EXPECT_EQ(e.code(), ncclInvalidArgument);
    EXPECT_STREQ(e.what(), c.message);
  }
}

TEST(Params, HetcclNameWinsOverTheNcclAlias) {
  ScopedEnv hetccl("HETCCL_COMM_BLOCKING", "1");
  ScopedEnv nccl("NCCL_COMM_BLOCKING", "0");
  EXPECT_TRUE(readFlag(kCommBlocking));
  {
    // An empty HETCCL_ value is unset: the alias applies.
    ScopedEnv empty("HETCCL_COMM_BLOCKING", "");
    EXPECT_FALSE(readFlag(kCommBlocking));
  }
  ScopedEnv badAlias("NCCL_COMM_BLOCKING", "2");
  ScopedEnv unset("HETCCL_COMM_BLOCKING", nullptr);
  // The message names the variable that was actually set.
  EXPECT_STREQ(expectError([] { readFlag(kCommBlocking); }).what(),
               "NCCL_COMM_BLOCKING=\"2\": expected 0 or 1");
}

TEST(Params, ChoicesAreMatchedInAnyCase) {
  ScopedEnv debug("HETCCL_DEBUG", "info");
  EXPECT_EQ(readChoice(kDebug), "INFO");
  ScopedEnv bogus("HETCCL_DEBUG", "bogus");
  EXPECT_STREQ(expectError([] { readChoice(kDebug); }).what(),
               "HETCCL_DEBUG=\"bogus\": expected NONE, VERSION, WARN, INFO or "
               "TRACE");
}

TEST(Params, StringsAreTakenAsTheyAre) {
  ScopedEnv hostId("HETCCL_HOSTID", "carrier-pigeon");
  EXPECT_EQ(readString(kHostId), "carrier-pigeon");
  EXPECT_EQ(Settings::fromEnvironment().hostId, "carrier-pigeon");
}

// A transport this build does not have fails the settings, whether or not
// a communicator would link anything.
TEST(Params, AnUnknownTransportIsRejected) {
  ScopedEnv transport("HETCCL_TRANSPORT", "carrier-pigeon");
  EXPECT_EQ(readString(kTransport), "carrier-pigeon");
  EXPECT_EQ(settingsRejection(),
            "HETCCL_TRANSPORT=\"carrier-pigeon\": expected auto or one of "
            "the transports of this build (shm, tcp, ucx, net)");
}

// Every declared default parses under its own rules, and every name is
// declared once.
TEST(Params, TableIsConsistent) {
  std::set<std::string> names;
  for (const ParamSpec* param : allParams()) {
    const ParamSpec& spec = *param;
    EXPECT_TRUE(names.insert(spec.name).second) << spec.name;
    EXPECT_EQ(std::string(spec.name).rfind("HETCCL_", 0), 0u) << spec.name;
    EXPECT_NE(spec.doc, nullptr);
    ASSERT_NE(spec.defaultText, nullptr) << spec.name;
    EXPECT_NO_THROW(checkParamText(spec, spec.defaultText, spec.name))
        << spec.name;
  }
}

}  // namespace
}  // namespace hetccl
