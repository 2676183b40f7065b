// The transport registry: what is registered, how HETCCL_TRANSPORT is
// read, and which transport links a pair of ranks.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "support/expect_error.h"
#include "support/in_process_oob.h"
#include "support/thread_ranks.h"
#include "transport/transport_registry.h"
#include "util/settings.h"

namespace hetccl {
namespace {

TEST(TransportRegistry, RegistersShmAndTcpWithTheirProperties) {
  const auto& transports = registeredTransports();
  ASSERT_EQ(transports.size(), 2u);
  EXPECT_STREQ(transports[0]->name(), "shm");
  EXPECT_FALSE(transports[0]->reachesOtherHosts());
  EXPECT_TRUE(transports[0]->sharesHostMemory());
  EXPECT_STREQ(transports[1]->name(), "tcp");
  EXPECT_TRUE(transports[1]->reachesOtherHosts());
  EXPECT_FALSE(transports[1]->sharesHostMemory());
  for (const Transport* transport : transports) {
    EXPECT_NE(transport->memoryKinds() & kHostMemory, 0u) << transport->name();
    EXPECT_GT(std::string(transport->description()).size(), 0u);
  }
  EXPECT_EQ(registeredTransportNames(), "shm, tcp");
}

TEST(TransportRegistry, AutoPrefersShmOnOneHostAndTcpBetweenHosts) {
  for (const char* value : {"", "auto"}) {
    auto selection = TransportSelection::parse(value);
    EXPECT_EQ(selection.forced(), nullptr) << value;
    EXPECT_STREQ(selection.choose(/*sameHost=*/true).name(), "shm");
    EXPECT_STREQ(selection.choose(/*sameHost=*/false).name(), "tcp");
  }
}

TEST(TransportRegistry, AForcedTransportLinksEveryPairItCanReach) {
  auto tcp = TransportSelection::parse("tcp");
  EXPECT_STREQ(tcp.choose(true).name(), "tcp");
  EXPECT_STREQ(tcp.choose(false).name(), "tcp");
  auto shm = TransportSelection::parse("shm");
  EXPECT_STREQ(shm.choose(true).name(), "shm");
  Error e = expectError([&] { shm.choose(false); });
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
    EXPECT_NE(message.find("shm, tcp"), std::string::npos) << message;
  }
}

// Every registered transport connects through the one interface: two
// ranks, linked by each transport in turn, move bytes both ways.
TEST(TransportRegistry, EveryTransportConnectsThroughTheInterface) {
  Settings settings = Settings::fromEnvironment();
  for (const Transport* transport : registeredTransports()) {
    InProcessWorld world(2);
    std::vector<std::unique_ptr<LinkSet>> sets(2);
    runRanks(2, [&](int rank) {
      InProcessOob oob(world, rank);
      sets[rank] = transport->connect({oob,
                                       settings,
                                       {1 - rank},
                                       std::make_shared<AbortSignal>(),
                                       nullptr});
    });
    std::vector<int> received(2, 0);
    runRanks(2, [&](int rank) {
      Link& link = *sets[rank]->link(1 - rank);
      int mine = 100 + rank;
      AbortSignal never;
      auto send = link.send(&mine, sizeof(mine));
      auto recv = link.recv(&received[rank], sizeof(int));
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
