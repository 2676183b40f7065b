// SpinWait's failure rules: a lost peer, an abort and a deadline end a
// wait, and a lost peer only after one more poll.
#include "util/spin_wait.h"

#include <gtest/gtest.h>

#include "support/expect_error.h"
#include "util/error.h"

namespace hetccl {
namespace {

// A peer that writes what is awaited and then exits is marked lost before
// the waiter polls again; that poll must still get its chance.
TEST(SpinWait, ALostPeerFailsTheWaitOnlyAfterOneMorePoll) {
  AbortSignal abort;
  PeerLiveness liveness(3);
  SpinWait wait(abort, &liveness, 0, "a flag", 1);
  wait.pause();
  liveness.markLost(1, "rank 1 exited");
  wait.pause();  // seen once: the caller polls again
  Error e = expectError([&] { wait.pause(); });
  EXPECT_EQ(e.code(), ncclRemoteError);
  EXPECT_STREQ(e.what(), "rank 1 exited");
}

TEST(SpinWait, EachCheckedPeerGetsItsOwnExtraPoll) {
  AbortSignal abort;
  PeerLiveness liveness(3);
  SpinWait wait(abort, &liveness, 0, "any peer", -1);
  liveness.markLost(2, "rank 2 exited");
  wait.checkPeer(0);
  wait.checkPeer(2);
  wait.pause();
  liveness.markLost(0, "rank 0 exited");
  wait.checkPeer(0);  // first sight of rank 0's loss
  Error e = expectError([&] { wait.checkPeer(2); });
  EXPECT_STREQ(e.what(), "rank 2 exited");
  EXPECT_STREQ(expectError([&] { wait.checkPeer(0); }).what(), "rank 0 exited");
}

TEST(SpinWait, ALostPeerNobodyWaitsForIsIgnored) {
  AbortSignal abort;
  PeerLiveness liveness(2);
  liveness.markLost(0, "rank 0 exited");
  SpinWait wait(abort, &liveness, 0, "a flag", 1);
  for (int i = 0; i < 100; ++i) wait.pause();
}

TEST(SpinWait, AnAbortFailsAtOnce) {
  AbortSignal abort;
  SpinWait wait(abort, nullptr, 0, "a flag", 0);
  abort.raise(ncclInvalidUsage, "aborted by the user");
  EXPECT_EQ(expectError([&] { wait.pause(); }).code(), ncclInvalidUsage);
}

TEST(SpinWait, ADeadlineFailsTheWaitAndRaisesTheAbort) {
  AbortSignal abort;
  SpinWait wait(abort, nullptr, 0.05, "a flag", 1);
  Error e = expectError([&] {
    for (;;) wait.pause();
  });
  EXPECT_EQ(e.code(), ncclRemoteError);
  EXPECT_NE(std::string(e.what()).find("waiting for rank 1 (a flag)"),
            std::string::npos)
      << e.what();
  EXPECT_TRUE(abort.raised());
}

}  // namespace
}  // namespace hetccl
