// LaunchWatch: a marked launch that stalls while a peer is lost is
// reported; between launches a lost peer is reported only once the watch
// was told that unmarked (captured) launches may run, and then only a peer
// that did not leave cleanly.
#include "engine/gpu/hostshm/launch_watch.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>

namespace hetccl {
namespace {

using std::chrono::milliseconds;

// The watch's words and what it reported.
struct Watched {
  uint64_t reached = 0;
  uint64_t passed = 0;
  std::atomic<bool> lost{false};
  std::atomic<bool> leftCleanly{false};
  std::atomic<int> reports{0};
  std::atomic<uint64_t> askedAbout{~uint64_t(0)};
  std::string message;
  std::unique_ptr<LaunchWatch> watch;

  Watched() {
    watch = std::make_unique<LaunchWatch>(
        &reached, &passed, /*timeoutSeconds=*/0,
        [this](uint64_t launch) {
          askedAbout = launch;
          if (lost && !(launch == 0 && leftCleanly))
            fail(ncclRemoteError, "rank 1 is gone");
        },
        [this](const Error& error) {
          message = error.what();
          reports.fetch_add(1);
        });
  }

  // Whether the watch reported within `limit`.
  bool reportedWithin(milliseconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (reports.load() == 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(milliseconds(10));
    return reports.load() > 0;
  }
};

void mark(uint64_t* word, uint64_t value) {
  __atomic_store_n(word, value, __ATOMIC_RELEASE);
}

TEST(LaunchWatch, AStalledLaunchWithALostPeerIsReported) {
  Watched w;
  mark(&w.reached, 1);
  w.lost = true;
  ASSERT_TRUE(w.reportedWithin(milliseconds(3000)));
  EXPECT_NE(w.message.find("rank 1 is gone"), std::string::npos) << w.message;
  EXPECT_EQ(w.askedAbout.load(), 1u) << "the stalled launch is named";
}

TEST(LaunchWatch, BetweenLaunchesALostPeerIsIgnoredUntilToldOtherwise) {
  Watched w;
  mark(&w.reached, 1);
  mark(&w.passed, 1);
  w.lost = true;
  EXPECT_FALSE(w.reportedWithin(milliseconds(300)));
  w.watch->watchBetweenLaunches();
  ASSERT_TRUE(w.reportedWithin(milliseconds(1000)));
  EXPECT_EQ(w.reports.load(), 1);
}

TEST(LaunchWatch, BetweenLaunchesAPeerThatLeftCleanlyIsNoFailure) {
  Watched w;
  w.watch->watchBetweenLaunches();
  w.lost = true;
  w.leftCleanly = true;
  EXPECT_FALSE(w.reportedWithin(milliseconds(300)));
  // A marked launch that stalls on it is still reported.
  mark(&w.reached, 1);
  EXPECT_TRUE(w.reportedWithin(milliseconds(3000)));
}

}  // namespace
}  // namespace hetccl
