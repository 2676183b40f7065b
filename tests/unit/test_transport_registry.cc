// The transport registry: what is registered, how HETCCL_TRANSPORT is
// read, and which transport links a pair of ranks.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "support/built_ucx_module.h"
#include "support/expect_error.h"
#include "support/in_process_oob.h"
#include "support/standin_net_plugin.h"
#include "support/test_call.h"
#include "support/thread_ranks.h"
#include "transport/transport_registry.h"

namespace hetccl {
namespace {

TEST(TransportRegistry, RegistersShmTcpUcxAndNetWithTheirProperties) {
  const auto& transports = registeredTransports();
  ASSERT_EQ(transports.size(), 4u);
  EXPECT_STREQ(transports[0]->name(), "shm");
  EXPECT_FALSE(transports[0]->reachesOtherHosts());
  EXPECT_TRUE(transports[0]->sharesHostMemory());
  EXPECT_STREQ(transports[1]->name(), "tcp");
  EXPECT_TRUE(transports[1]->reachesOtherHosts());
  EXPECT_FALSE(transports[1]->sharesHostMemory());
  EXPECT_STREQ(transports[2]->name(), "ucx");
  EXPECT_TRUE(transports[2]->reachesOtherHosts());
  EXPECT_FALSE(transports[2]->sharesHostMemory());
  EXPECT_STREQ(transports[3]->name(), "net");
  EXPECT_TRUE(transports[3]->reachesOtherHosts());
  EXPECT_FALSE(transports[3]->sharesHostMemory());
  for (const Transport* transport : transports) {
    EXPECT_NE(transport->memoryKinds() & kHostMemory, 0u) << transport->name();
    EXPECT_GT(std::string(transport->description()).size(), 0u);
  }
  EXPECT_EQ(registeredTransportNames(), "shm, tcp, ucx, net");
}

TEST(TransportRegistry, AutoPrefersShmOnOneHost) {
  for (const char* value : {"", "auto"}) {
    auto selection = TransportSelection::parse(value);
    EXPECT_EQ(selection.forced(), nullptr) << value;
    EXPECT_STREQ(selection.onOneHost().name(), "shm");
  }
}

// Preferences in registration order: shm, tcp, ucx.
TEST(TransportRegistry, BetweenHostsAPairTakesWhatTheLessEagerRankWantsMost) {
  auto selection = TransportSelection::parse("auto");
  const std::vector<uint8_t> rdma = {0, 10, 20}, noRdma = {0, 10, 5},
                             noUcx = {0, 10, 0};
  EXPECT_STREQ(selection.betweenHosts(rdma, rdma).name(), "ucx");
  EXPECT_STREQ(selection.betweenHosts(rdma, noRdma).name(), "tcp");
  EXPECT_STREQ(selection.betweenHosts(noUcx, rdma).name(), "tcp");
  EXPECT_STREQ(selection.betweenHosts(noRdma, noRdma).name(), "tcp");
  // shm never links hosts, however much a (broken) rank wants it.
  EXPECT_STREQ(selection.betweenHosts({200, 10, 0}, {200, 10, 0}).name(),
               "tcp");
  Error e = expectError([&] { selection.betweenHosts({0, 0, 0}, rdma); });
  EXPECT_EQ(e.code(), ncclInvalidUsage);
}

TEST(TransportRegistry, ThisMachinePrefersTcpBetweenHostsWithoutRdma) {
  const char* noUcx = nullptr;
  useBuiltUcxModule(&noUcx);
  auto preferences = TransportSelection::parse("").preferencesBetweenHosts();
  ASSERT_EQ(preferences.size(), 4u);
  EXPECT_EQ(preferences[0], 0);   // shm
  EXPECT_EQ(preferences[1], 10);  // tcp
  EXPECT_LT(preferences[2], 10);  // ucx: absent, or no rc/dc/ud here
  EXPECT_EQ(preferences[3], 0);   // net: only when named, for now
}

// The reason goes with the lower preference: what the user must install.
TEST(TransportRegistry, UcxSaysWhatIsMissingBetweenHosts) {
  const char* noUcx = nullptr;
  useBuiltUcxModule(&noUcx);
  const std::vector<const Transport*>& transports = registeredTransports();
  EXPECT_EQ(transports[0]->missingBetweenHosts(), "");  // shm
  EXPECT_EQ(transports[1]->missingBetweenHosts(), "");  // tcp
  const std::string missing = transports[2]->missingBetweenHosts();
  EXPECT_NE(missing.find(noUcx != nullptr ? "UCX is not available"
                                          : "has no RDMA transport here"),
            std::string::npos)
      << missing;
  EXPECT_NE(missing.find("install"), std::string::npos) << missing;
}

TEST(TransportRegistry, AForcedTransportLinksEveryPairItCanReach) {
  const std::vector<uint8_t> none;
  for (const char* name : {"tcp", "ucx", "net"}) {
    auto forced = TransportSelection::parse(name);
    EXPECT_STREQ(forced.onOneHost().name(), name);
    EXPECT_STREQ(forced.betweenHosts(none, none).name(), name);
  }
  auto shm = TransportSelection::parse("shm");
  EXPECT_STREQ(shm.onOneHost().name(), "shm");
  Error e = expectError([&] { shm.betweenHosts(none, none); });
  EXPECT_EQ(e.code(), ncclInvalidUsage);
  EXPECT_NE(std::string(e.what()).find("HETCCL_TRANSPORT=shm"),
            std::string::npos)
      << e.what();
}

TEST(TransportRegistry, AnUnknownNameIsRefusedNamingTheRegisteredOnes) {
  for (const char* value : {"rdma", "SHM", " tcp"}) {
    Error e = expectError([&] { TransportSelection::parse(value); });
    EXPECT_EQ(e.code(), ncclInvalidArgument);
    std::string message = e.what();
    EXPECT_NE(message.find(std::string("\"") + value + "\""), std::string::npos)
        << message;
    EXPECT_NE(message.find("shm, tcp, ucx"), std::string::npos) << message;
  }
}

// Every registered transport connects through the one interface: two
// ranks, linked by each transport in turn, move bytes both ways.
TEST(TransportRegistry, EveryTransportConnectsThroughTheInterface) {
  const TransportSettings settings = TransportSettings::fromEnvironment();
  constexpr double kSetupSeconds = 60;
  const char* noUcx = nullptr;
  const bool ucx = useBuiltUcxModule(&noUcx);
  useStandInNetPlugin();
  for (const Transport* transport : registeredTransports()) {
    if (!ucx && std::string(transport->name()) == "ucx") {
      std::printf("ucx left out: %s\n", noUcx);
      continue;
    }
    InProcessWorld world(2);
    std::vector<std::unique_ptr<LinkSet>> sets(2);
    runRanks(2, [&](int rank) {
      InProcessOob oob(world, rank);
      sets[rank] = transport->connect({oob,
                                       settings,
                                       kSetupSeconds,
                                       {1 - rank},
                                       std::make_shared<AbortSignal>(),
                                       nullptr});
    });
    std::vector<int> received(2, 0);
    runRanks(2, [&](int rank) {
      Link& link = *sets[rank]->link(1 - rank);
      int mine = 100 + rank;
      AbortSignal never;
      auto send = link.send(&mine, sizeof(mine), kTestCall);
      auto recv = link.recv(&received[rank], sizeof(int), kTestCall);
      send->wait(never, 20);
      recv->wait(never, 20);
    });
    EXPECT_EQ(received[0], 101) << transport->name();
    EXPECT_EQ(received[1], 100) << transport->name();
    Error e = expectError([&] { sets[0]->link(0); });
    EXPECT_EQ(e.code(), ncclInvalidArgument) << transport->name();
  }
}

}  // namespace
}  // namespace hetccl
