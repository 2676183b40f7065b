// The staging proxy's control words, one per launch script alive: a launch
// that runs once waits for the stream to free a word (as a GPU runtime's
// launch waits while its stream's queue is full), a captured one fails
// with ncclInvalidUsage when none is left, and an abort ends the wait
// with the abort's error.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>

#include "engine/gpu/proxy/staged_launch_script.h"
#include "engine/gpu/proxy/staging_proxy.h"
#include "runtime/host/emulated_device_module.h"
#include "util/abort_signal.h"

namespace hetccl {
namespace {

constexpr auto kStillWaiting = std::chrono::milliseconds(200);
constexpr auto kWordFreedWithin = std::chrono::seconds(10);

class StagingProxyWords : public ::testing::Test {
 protected:
  // A proxy with one control word and no links.
  StagingProxyWords()
      : abort_(std::make_shared<AbortSignal>()),
        proxy_(
            abort_, /*timeoutSeconds=*/0,
            PinnedHostMemory(emulatedDeviceModule(), sizeof(uint64_t)),
            [](const Error&) {}, /*waiting=*/nullptr) {}

  // What the engine does at a launch: a script on a word, started later.
  StagedLaunchScript* addScript(bool replayable) {
    auto script = std::make_unique<StagedLaunchScript>(
        proxy_.takeControlWord(replayable), replayable);
    StagedLaunchScript* added = script.get();
    proxy_.addScript(std::move(script));
    return added;
  }

  // What the engine's stream does when it reaches the launch.
  static void streamReaches(StagedLaunchScript* script) {
    __atomic_store_n(script->control(), StagedLaunchScript::kStart,
                     __ATOMIC_RELEASE);
  }

  std::shared_ptr<AbortSignal> abort_;
  StagingProxy proxy_;
};

TEST_F(StagingProxyWords, ALaunchThatRunsOnceWaitsForItsStreamToFreeAWord) {
  StagedLaunchScript* first = addScript(/*replayable=*/false);
  auto second = std::async(std::launch::async, [&] {
    return proxy_.takeControlWord(/*replayable=*/false);
  });
  EXPECT_EQ(second.wait_for(kStillWaiting), std::future_status::timeout)
      << "the only word is taken until the stream reaches the first launch";
  uint64_t* word = first->control();
  streamReaches(first);
  ASSERT_EQ(second.wait_for(kWordFreedWithin), std::future_status::ready);
  EXPECT_EQ(second.get(), word);
}

TEST_F(StagingProxyWords, ACaptureFailsWhenEveryWordIsTaken) {
  StagedLaunchScript* captured = addScript(/*replayable=*/true);
  streamReaches(captured);  // a replay: the word stays the graph's
  try {
    proxy_.takeControlWord(/*replayable=*/true);
    FAIL() << "a capture got a word that a graph holds";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ncclInvalidUsage);
    EXPECT_NE(std::string(error.what()).find("captured launches"),
              std::string::npos)
        << error.what();
  }
}

TEST_F(StagingProxyWords, AnAbortEndsTheWaitWithItsError) {
  addScript(/*replayable=*/false);  // its stream never gets there
  auto waiting = std::async(std::launch::async, [&] {
    try {
      proxy_.takeControlWord(/*replayable=*/false);
      return ncclSuccess;
    } catch (const Error& error) {
      return error.code();
    }
  });
  EXPECT_EQ(waiting.wait_for(kStillWaiting), std::future_status::timeout);
  abort_->raise(ncclRemoteError, "a peer left");
  ASSERT_EQ(waiting.wait_for(kWordFreedWithin), std::future_status::ready);
  EXPECT_EQ(waiting.get(), ncclRemoteError);
}

}  // namespace
}  // namespace hetccl
