// Stall reports: the first line once a wait has lasted HETCCL_STALL_WARN,
// the next once it has lasted twice as long as at the last line, a new
// wait starting over, and nothing at all with 0.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "core/stall_report.h"

namespace hetccl {
namespace {

using Clock = WaitingCall::Clock;

class StallReportTest : public ::testing::Test {
 protected:
  StallReportTest() {
    CallSignature call{};
    call.call = OpKind::AllReduce;
    call.sequence = 7;
    call.count = 1024;
    call.dtype = ncclFloat32;
    call.redOp = ncclSum;
    calls_->record(call);
  }

  // The wait for `peer` in call #7 began `secondsAgo`, on `leg`.
  void waitingSince(double secondsAgo, int peer = 1, const WaitLeg& leg = {},
                    const PieceSource* pieces = nullptr) {
    waiting_.enter(
        7, peer,
        Clock::now() - std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(secondsAgo)),
        leg, pieces);
  }

  // Rank 0 in domain 0 with rank 2; rank 1 in domain 1 over tcp, whose
  // latest transfer here belonged to `latestFromRankOne` (0: none).
  StallReport report(double warnSeconds, uint64_t latestFromRankOne = 0,
                     const std::string& backend = "host collectives") {
    std::vector<WaitDescription::Peer> peers{
        {"rank 0 (domain 0, host nodeA, pid 41)", 0, ""},
        {"rank 1 (domain 1, host nodeB, pid 42)", 1, "tcp"},
        {"rank 2 (domain 0, host nodeA, pid 43)", 0, ""}};
    return StallReport(0, warnSeconds,
                       std::make_shared<WaitDescription>(
                           0, backend, peers,
                           [latestFromRankOne](int peer) {
                             return peer == 1 ? latestFromRankOne : 0;
                           }),
                       calls_);
  }

  std::shared_ptr<CallLog> calls_ = std::make_shared<CallLog>();
  WaitingCall waiting_;
};

TEST_F(StallReportTest, NamesTheCallThePeerItsHostAndLink) {
  StallReport stalls = report(30);
  waitingSince(29);
  EXPECT_EQ(stalls.check(waiting_), std::nullopt);
  waitingSince(31);
  const std::optional<std::string> line = stalls.check(waiting_);
  ASSERT_TRUE(line.has_value());
  EXPECT_NE(line->find("rank 0: op #7 allReduce(1024 x float32, sum) has "
                       "waited 31 s for rank 1 (domain 1, host nodeB, pid "
                       "42) on its tcp link"),
            std::string::npos)
      << *line;
}

TEST_F(StallReportTest, RepeatsEachTimeTheWaitHasDoubled) {
  StallReport stalls = report(30);
  waitingSince(31);
  EXPECT_TRUE(stalls.check(waiting_).has_value());
  waitingSince(61);
  EXPECT_EQ(stalls.check(waiting_), std::nullopt) << "31 s doubled is 62 s";
  waitingSince(63);
  EXPECT_TRUE(stalls.check(waiting_).has_value());
  waitingSince(120);
  EXPECT_EQ(stalls.check(waiting_), std::nullopt);
  waitingSince(127);
  EXPECT_TRUE(stalls.check(waiting_).has_value());
}

TEST_F(StallReportTest, ANewWaitStartsOverAndAnEndedOneIsForgotten) {
  StallReport stalls = report(30);
  waitingSince(100);
  EXPECT_TRUE(stalls.check(waiting_).has_value());
  waitingSince(31, /*peer=*/-1);  // another wait: reported at 30 s again
  const std::optional<std::string> line = stalls.check(waiting_);
  ASSERT_TRUE(line.has_value());
  EXPECT_NE(line->find("for a rank of another domain"), std::string::npos)
      << *line;
  waiting_.leave();
  EXPECT_EQ(stalls.check(waiting_), std::nullopt);
  waitingSince(31, /*peer=*/-1);
  EXPECT_TRUE(stalls.check(waiting_).has_value()) << "the same wait again";
}

// How far a transfer got is read when the line is written, not when the
// wait began.
class ThreePieces : public PieceSource {
 public:
  PieceCount pieces() const override { return {done, 3}; }
  uint32_t done = 0;
};

TEST_F(StallReportTest, SaysHowManyPiecesArrivedAndThePeersLatestCall) {
  StallReport stalls = report(30, /*latestFromRankOne=*/6);
  auto pieces = std::make_shared<ThreePieces>();
  WaitLeg leg;
  leg.way = TransferWay::kReceive;
  waitingSince(31, 1, leg, pieces.get());
  pieces->done = 2;
  const std::optional<std::string> line = stalls.check(waiting_);
  ASSERT_TRUE(line.has_value());
  EXPECT_NE(line->find("on its tcp link: 2 of 3 pieces received; the latest "
                       "transfer from rank 1 here belonged to op #6;"),
            std::string::npos)
      << *line;
}

TEST_F(StallReportTest, NamesTheGpuEnginesStage) {
  StallReport stalls = report(30);
  WaitLeg leg;
  leg.way = TransferWay::kSend;
  leg.stage = EngineStage::kNetwork;
  leg.pieces = {0, 4};
  waitingSince(31, 1, leg);
  const std::optional<std::string> line = stalls.check(waiting_);
  ASSERT_TRUE(line.has_value());
  EXPECT_NE(line->find("on its tcp link: 0 of 4 pieces sent; the staged GPU "
                       "engine's stage: network;"),
            std::string::npos)
      << *line;
}

TEST_F(StallReportTest, AWaitInsideTheDomainNamesItsBackendAndStep) {
  StallReport stalls = report(30);
  WaitLeg leg;
  leg.kind = WaitLeg::Kind::kDomain;
  leg.step = "broadcast data";
  waitingSince(31, 2, leg);
  const std::optional<std::string> line = stalls.check(waiting_);
  ASSERT_TRUE(line.has_value());
  EXPECT_NE(line->find("for rank 2 (domain 0, host nodeA, pid 43) inside "
                       "domain 0's host collectives, waiting for its "
                       "broadcast data;"),
            std::string::npos)
      << *line;
}

TEST_F(StallReportTest, AStepThatNamesItsOwnerAndSeveralPeersReadWell) {
  StallReport stalls = report(30);
  WaitLeg leg;
  leg.kind = WaitLeg::Kind::kDomain;
  leg.step = "its input of a collective";
  waitingSince(31, /*peer=*/-1, leg);
  const std::optional<std::string> line = stalls.check(waiting_);
  ASSERT_TRUE(line.has_value());
  EXPECT_NE(line->find("for a rank of domain 0 inside domain 0's host "
                       "collectives, waiting for its input of a collective;"),
            std::string::npos)
      << *line;
}

// A GPU rank's proxy finds its engine's stream not past a domain step of
// the vendor library: the step's op kind and its place among the op's
// domain steps, waited for with a rank of the domain (which one, only
// the library knows).
TEST_F(StallReportTest, AGpuDomainStepNamesTheCallAndItsPlace) {
  StallReport stalls = report(30, 0, "NCCL");
  WaitLeg leg;
  leg.kind = WaitLeg::Kind::kDomain;
  leg.step = "reduceScatter";
  leg.stepIndex = 1;
  leg.stepCount = 3;
  waitingSince(31, /*peer=*/-1, leg);
  std::optional<std::string> line = stalls.check(waiting_);
  ASSERT_TRUE(line.has_value());
  EXPECT_NE(line->find("for a rank of domain 0 inside domain 0's NCCL, in "
                       "its reduceScatter (step 1 of 3)"),
            std::string::npos)
      << *line;
  EXPECT_EQ(line->find("waiting for its reduceScatter"), std::string::npos)
      << *line;
  // The count is not known yet while the op's plan is being enqueued.
  leg.stepCount = 0;
  waitingSince(70, /*peer=*/-1, leg);  // twice as long: a line again
  line = stalls.check(waiting_);
  ASSERT_TRUE(line.has_value());
  EXPECT_NE(line->find("inside domain 0's NCCL, in its reduceScatter (step "
                       "1)"),
            std::string::npos)
      << *line;
}

// A scope that ends clears its own wait only: a later wait marked on
// another thread (a GPU rank's proxy, its domain's stream) stays.
TEST(WaitScopeTest, EndingClearsOnlyItsOwnWait) {
  WaitingCall waiting;
  {
    WaitScope first(&waiting, 3, 1);
    EXPECT_TRUE(waiting.stalledFor(0).has_value());
    waiting.enter(3, 2);  // another thread's, later
  }
  const std::optional<WaitingCall::Stall> left = waiting.stalledFor(0);
  ASSERT_TRUE(left.has_value());
  EXPECT_EQ(left->peer, 2);
  { WaitScope second(&waiting, 4, 1); }
  EXPECT_FALSE(waiting.stalledFor(0).has_value());
}

TEST_F(StallReportTest, ZeroTurnsReportsOff) {
  StallReport stalls = report(0);
  waitingSince(1000);
  EXPECT_EQ(stalls.check(waiting_), std::nullopt);
}

}  // namespace
}  // namespace hetccl
