// The GPU engine's stream timeline on the emulated device module: the time
// between two marks goes to the first one's phase, launches add up, and a
// launch with more steps than marks says so.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "engine/gpu/stream_timeline.h"
#include "runtime/host/emulated_device_module.h"

namespace hetccl {
namespace {

// The milliseconds the summary gives `phase`.
double millisecondsOf(const std::string& summary, const std::string& phase) {
  const size_t at = summary.find(phase + " ");
  if (at == std::string::npos) return -1;
  return std::stod(summary.substr(at + phase.size() + 1));
}

struct Stream {
  const DeviceModule& module = emulatedDeviceModule();
  void* handle = nullptr;
  Stream() { EXPECT_EQ(module.api().streamCreate(&handle), 0); }
  ~Stream() { module.api().streamDestroy(handle); }
};

// The stream waits for a word that a thread sets `ms` later.
void holdStream(const Stream& stream, std::atomic<uint64_t>& word, int ms,
                std::thread& setter) {
  auto* address = reinterpret_cast<uint64_t*>(&word);
  ASSERT_EQ(stream.module.api().waitValue64(stream.handle, address, 1), 0);
  setter = std::thread([&word, ms] {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    word.store(1);
  });
}

TEST(StreamTimeline, TimeBetweenMarksGoesToTheFirstOnesPhase) {
  Stream stream;
  StreamTimeline timeline(stream.module, stream.handle, 16);
  for (int launch = 0; launch < 2; ++launch) {
    std::atomic<uint64_t> word{0};
    std::thread setter;
    timeline.beginLaunch();
    timeline.mark(StreamPhase::TransferWaits);
    holdStream(stream, word, 60, setter);
    timeline.mark(StreamPhase::Reductions);
    timeline.endLaunch();
    setter.join();
    // The stream reads `word` until its wait ends: drain it before the word
    // goes out of scope.
    ASSERT_EQ(stream.module.api().streamSynchronize(stream.handle), 0);
  }
  const std::string summary = timeline.summary();
  EXPECT_GE(millisecondsOf(summary, "waits for transfers across domains"), 110)
      << summary;
  EXPECT_LT(millisecondsOf(summary, "reductions"), 20) << summary;
  EXPECT_NE(summary.find("2 launch(es)"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("more steps than marks"), std::string::npos)
      << summary;
}

TEST(StreamTimeline, ALaunchWithMoreStepsThanMarksSaysSo) {
  Stream stream;
  StreamTimeline timeline(stream.module, stream.handle, 3);
  timeline.beginLaunch();
  timeline.mark(StreamPhase::DomainSteps);
  timeline.mark(StreamPhase::OtherCopies);  // dropped: End keeps the last
  timeline.mark(StreamPhase::Reductions);
  timeline.endLaunch();
  const std::string summary = timeline.summary();
  EXPECT_NE(summary.find("more steps than marks"), std::string::npos)
      << summary;
  EXPECT_GE(millisecondsOf(summary, "domain steps"), 0) << summary;
}

}  // namespace
}  // namespace hetccl
