// The abort signal's shared causes (util/abort_signal.h): which raises are
// announced first, and how a held cause outranks a later raise and waits
// for its settling; and the waiting marker the call probe reads
// (op/waiting_call.h).
#include "util/abort_signal.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "op/waiting_call.h"

namespace hetccl {
namespace {

using Clock = std::chrono::steady_clock;

TEST(AbortSignal, TheFirstRaiseWins) {
  AbortSignal signal;
  EXPECT_FALSE(signal.raised());
  signal.raise(ncclSystemError, "first");
  signal.raise(ncclRemoteError, "second");
  EXPECT_TRUE(signal.raised());
  EXPECT_EQ(signal.code(), ncclSystemError);
  EXPECT_EQ(signal.reason(), "first");
}

TEST(AbortSignal, SharedCausesAreAnnouncedBeforeTheyTakeEffect) {
  AbortSignal signal;
  std::vector<std::string> announced;
  signal.setAnnouncer([&](ncclResult_t code, const std::string& reason) {
    EXPECT_FALSE(signal.raised()) << "no wait may see it yet";
    announced.push_back(std::to_string(code) + ": " + reason);
  });
  signal.raise(ncclInvalidUsage, "op #3: calls differ");
  EXPECT_TRUE(signal.raised());
  signal.raise(ncclRemoteError, "later");  // the first stays, unannounced
  ASSERT_EQ(announced.size(), 1u);
  EXPECT_NE(announced[0].find("op #3: calls differ"), std::string::npos);
}

TEST(AbortSignal, LocalCausesAreNotAnnounced) {
  for (ncclResult_t code : {ncclSystemError, ncclInternalError}) {
    AbortSignal signal;
    int calls = 0;
    signal.setAnnouncer([&](ncclResult_t, const std::string&) { ++calls; });
    signal.raise(code, "this rank's own");
    EXPECT_EQ(calls, 0) << code;
  }
  AbortSignal revoked;
  int calls = 0;
  revoked.setAnnouncer([&](ncclResult_t, const std::string&) { ++calls; });
  revoked.raiseUnannounced(ncclInvalidUsage, "revoked");
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(revoked.code(), ncclInvalidUsage);
}

TEST(AbortSignal, AHeldCauseOutranksALaterRaiseOnceSettled) {
  AbortSignal signal;
  int announcements = 0;
  signal.setAnnouncer(
      [&](ncclResult_t, const std::string&) { ++announcements; });
  EXPECT_TRUE(signal.hold(ncclInvalidUsage, "rank 2's cause", 5.0));
  // The first stays.
  EXPECT_TRUE(signal.hold(ncclRemoteError, "a second cause", 5.0));
  // A raise here (say, the exit of a rank that raised the cause) waits
  // until the announcer settles it, then reports the held cause.
  std::thread settler([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    signal.raiseHeld();
  });
  const auto start = Clock::now();
  signal.raise(ncclRemoteError, "connection to rank 2 lost");
  const auto waited = Clock::now() - start;
  settler.join();
  EXPECT_GE(waited, std::chrono::milliseconds(50));
  EXPECT_LT(waited, std::chrono::seconds(4));
  EXPECT_EQ(signal.code(), ncclInvalidUsage);
  EXPECT_EQ(signal.reason(), "rank 2's cause");
  EXPECT_EQ(announcements, 0);
}

TEST(AbortSignal, ADisagreementFoundHereOutranksAHeldOne) {
  AbortSignal signal;
  signal.hold(ncclInvalidUsage, "op #1: rank 1 and rank 3 differ", 0.2);
  signal.raise(ncclInvalidUsage, "op #1: rank 0 and rank 2 differ");
  EXPECT_EQ(signal.reason(), "op #1: rank 0 and rank 2 differ");
  // A loss found here does not: it may be the held cause's consequence.
  AbortSignal lost;
  lost.hold(ncclInvalidUsage, "op #1: rank 1 and rank 3 differ", 0.2);
  lost.raise(ncclRemoteError, "rank 1 exited");
  EXPECT_EQ(lost.reason(), "op #1: rank 1 and rank 3 differ");
}

// The call probe holds a cause it is told of before it answers the
// teller; while this rank announces a cause of its own (the teller may be
// waiting for this rank's answer meanwhile) the hold gives way at once.
TEST(AbortSignal, NothingIsHeldWhileThisRankAnnounces) {
  AbortSignal signal;
  bool held = true;
  Clock::duration took{};
  signal.setAnnouncer([&](ncclResult_t, const std::string&) {
    std::thread prober([&] {
      const auto start = Clock::now();
      held = signal.hold(ncclInvalidUsage, "rank 2's cause", 5.0);
      took = Clock::now() - start;
    });
    prober.join();
  });
  signal.raise(ncclRemoteError, "rank 3 exited");
  EXPECT_FALSE(held);
  EXPECT_LT(took, std::chrono::seconds(1));
  EXPECT_EQ(signal.reason(), "rank 3 exited");
}

TEST(AbortSignal, AHeldCauseNobodySettlesIsRaisedAfterItsBound) {
  AbortSignal signal;
  signal.hold(ncclRemoteError, "rank 3 exited", 0.2);
  const auto start = Clock::now();
  signal.raise(ncclSystemError, "something else");
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(150));
  EXPECT_EQ(signal.code(), ncclRemoteError);
  EXPECT_EQ(signal.reason(), "rank 3 exited");
}

TEST(WaitingCall, OnlyAWaitThatLastsIsAStall) {
  WaitingCall waiting;
  EXPECT_FALSE(waiting.stalledFor(0).has_value());
  waiting.enter(17, 3, Clock::now() - std::chrono::seconds(1));
  auto stall = waiting.stalledFor(0.5);
  ASSERT_TRUE(stall.has_value());
  EXPECT_EQ(stall->sequence, 17u);
  EXPECT_EQ(stall->peer, 3);
  waiting.enter(18, 1);  // a new wait starts now
  EXPECT_FALSE(waiting.stalledFor(0.5).has_value());
  waiting.leave();
  EXPECT_FALSE(waiting.stalledFor(0).has_value());
  {
    WaitScope scope(&waiting, 19, 2);
    EXPECT_TRUE(waiting.stalledFor(0).has_value());
  }
  EXPECT_FALSE(waiting.stalledFor(0).has_value());
  WaitScope unmarked(nullptr, 20, 2);  // no marker: nothing to do
}

}  // namespace
}  // namespace hetccl
