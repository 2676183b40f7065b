// Where a rank says it sits: HETCCL_HOSTID as one name for the process or a
// list with one entry per rank (pretend hosts for a whole job from one
// variable), and the placement a communicator split from a parent keeps.
#include <gtest/gtest.h>

#include "core/peer_info.h"
#include "support/expect_error.h"

namespace hetccl {
namespace {

PeerInfo rankWithHostIds(int rank, int nranks, const char* hostIds) {
  Settings settings{};
  settings.hostId = hostIds;
  return PeerInfo::local(rank, nranks, std::nullopt, settings);
}

TEST(PeerPlacement, AHostIdListGivesEachRankItsEntry) {
  std::vector<uint64_t> hosts;
  for (int r = 0; r < 4; ++r)
    hosts.push_back(rankWithHostIds(r, 4, "A,A,B,B").hostId);
  EXPECT_EQ(hosts[0], hosts[1]);
  EXPECT_EQ(hosts[2], hosts[3]);
  EXPECT_NE(hosts[0], hosts[2]);
  EXPECT_EQ(hosts[0], rankWithHostIds(0, 1, "A").hostId);
}

TEST(PeerPlacement, OneHostIdPutsEveryRankOnOneHost) {
  EXPECT_EQ(rankWithHostIds(0, 3, "node7").hostId,
            rankWithHostIds(2, 3, "node7").hostId);
}

TEST(PeerPlacement, AListOfAnotherLengthIsRefused) {
  Error e = expectError([] { rankWithHostIds(1, 4, "A,B"); });
  EXPECT_EQ(e.code(), ncclInvalidArgument);
  EXPECT_STREQ(e.what(),
               "HETCCL_HOSTID=\"A,B\" has 2 entries for 4 ranks (expected one "
               "host name, or one entry per rank)");
}

TEST(PeerPlacement, ASplitKeepsTheParentsPlacement) {
  Settings settings{};
  settings.hostId = "X,Y";
  settings.domains = "0,1";
  PeerInfo info =
      PeerInfo::local(0, 2, std::nullopt, settings, Placement{7, 1234});
  EXPECT_EQ(info.domainLabel, 7);
  EXPECT_EQ(info.hostId, 1234u);
}

}  // namespace
}  // namespace hetccl
