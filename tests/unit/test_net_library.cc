// Loading NCCL net plugins through the net module, with the stand-in
// plugin of every ABI version: the newest version a plugin exports is
// taken, each version's properties come through, what the plugin sets in
// the environment is put back, and a plugin that cannot be used fails with
// a message that names it and what failed.
#include "transport/net/net_library.h"

#include <gtest/gtest.h>
#include <limits.h>
#include <stdlib.h>

#include <string>

#include "support/expect_error.h"
#include "support/scoped_env.h"
#include "support/standin_net_plugin.h"
#include "transport/net/net_handles.h"

namespace hetccl {
namespace {

const NetLibrary& load(const std::string& plugin) {
  return loadedNetLibrary(plugin);
}

TEST(NetLibrary, TakesTheNewestVersionAPluginExports) {
  EXPECT_EQ(load(standInNetPlugin()).abiVersion(), 12);
  for (int version = 8; version <= 12; ++version) {
    const NetLibrary& net = load(standInNetPlugin(version));
    EXPECT_EQ(net.abiVersion(), version);
    EXPECT_EQ(net.name(), "hetccl-test");
    EXPECT_NE(net.description().find("ABI v" + std::to_string(version)),
              std::string::npos)
        << net.description();
  }
}

TEST(NetLibrary, ReadsEachVersionsProperties) {
  ScopedEnv devices("HETCCL_TEST_NET_DEVICES", "2");
  ScopedEnv maxBytes("HETCCL_TEST_NET_MAX_BYTES", "131072");
  for (int version = 8; version <= 12; ++version) {
    const NetLibrary& net = load(standInNetPlugin(version));
    ASSERT_EQ(net.devices().size(), 2u) << version;
    const hetcclNetDeviceInfo& second = net.devices()[1];
    EXPECT_STREQ(second.name, "standin1");
    EXPECT_STREQ(second.pciPath, "");
    EXPECT_EQ(second.guid, 0x5354414e44000001ull);
    EXPECT_EQ(second.ptrSupport, 1);  // host memory only
    EXPECT_EQ(second.speedMbps, 10000);
    EXPECT_EQ(second.port, 1);
    EXPECT_EQ(second.maxRecvs, 1);
    // v8 has no limit of its own; its sizes are ints.
    EXPECT_EQ(second.maxP2pBytes, version == 8 ? size_t{INT_MAX} : 131072u)
        << version;
  }
}

TEST(NetLibrary, PutsBackWhatThePluginSetsInTheEnvironment) {
  ScopedEnv probe("HETCCL_TEST_NET_PROBE", nullptr);
  ScopedEnv setter("HETCCL_TEST_NET_SET_ENV", "HETCCL_TEST_NET_PROBE=set");
  for (int version : {8, 10, 12}) {
    const NetLibrary& net = load(standInNetPlugin(version));
    EXPECT_EQ(getenv("HETCCL_TEST_NET_PROBE"), nullptr) << version;
    // A communicator's own init (v11 on) is guarded too.
    NetContext context(net, 42);
    EXPECT_EQ(getenv("HETCCL_TEST_NET_PROBE"), nullptr) << version;
  }
}

TEST(NetLibrary, APluginThatCannotBeFoundNamesEveryFileTried) {
  Error e = expectError([] { load("no-such-plugin"); });
  EXPECT_EQ(e.code(), ncclSystemError);
  const std::string what = e.what();
  EXPECT_NE(what.find("tried libnccl-net-no-such-plugin.so ("),
            std::string::npos)
      << what;
  EXPECT_NE(what.find("; no-such-plugin ("), std::string::npos) << what;
}

TEST(NetLibrary, ALibraryWithoutTheTablesIsNoPlugin) {
  Error e = expectError([] { load(builtNetModule()); });
  EXPECT_EQ(e.code(), ncclSystemError);
  EXPECT_NE(std::string(e.what()).find("exports no ncclNetPlugin_v8 .. "
                                       "ncclNetPlugin_v12"),
            std::string::npos)
      << e.what();
}

TEST(NetLibrary, NoDevicesOrAFailedInitFailsTheLoad) {
  {
    ScopedEnv none("HETCCL_TEST_NET_DEVICES", "0");
    Error e = expectError([] { load(standInNetPlugin(11)); });
    EXPECT_EQ(e.code(), ncclSystemError);
    EXPECT_NE(std::string(e.what()).find("net plugin hetccl-test (ABI v11, "),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("reports no devices"),
              std::string::npos)
        << e.what();
  }
  ScopedEnv failing("HETCCL_TEST_NET_FAIL_INIT", "1");
  Error e = expectError([] { load(standInNetPlugin(9)); });
  EXPECT_EQ(e.code(), ncclSystemError);
  EXPECT_NE(std::string(e.what()).find("(ABI v9, "), std::string::npos)
      << e.what();
  EXPECT_NE(std::string(e.what()).find("init failed: ncclSystemError"),
            std::string::npos)
      << e.what();
}

TEST(NetLibrary, ARefusedRegistrationNamesTheCall) {
  ScopedEnv refuse("HETCCL_TEST_NET_FAIL_REGMR", "1");
  const NetLibrary& net = load(standInNetPlugin());
  NetContext context(net, 7);
  char buffer[64];
  Error e = expectError([&] { NetRegistration(context, nullptr, buffer, 64); });
  EXPECT_EQ(e.code(), ncclSystemError);
  EXPECT_NE(std::string(e.what()).find("regMr failed"), std::string::npos)
      << e.what();
}

}  // namespace
}  // namespace hetccl
