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

  // The wait for `peer` in call #7 began `secondsAgo`.
  void waitingSince(double secondsAgo, int peer = 1) {
    waiting_.enter(
        7, peer,
        Clock::now() - std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(secondsAgo)));
  }

  StallReport report(double warnSeconds) {
    return StallReport(0, warnSeconds,
                       {"",
                        "rank 1 (domain 1, host nodeB, pid 42) on its "
                        "tcp link"},
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

TEST_F(StallReportTest, ZeroTurnsReportsOff) {
  StallReport stalls = report(0);
  waitingSince(1000);
  EXPECT_EQ(stalls.check(waiting_), std::nullopt);
}

}  // namespace
}  // namespace hetccl
