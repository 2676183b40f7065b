// A CPU rank's plan timeline (HETCCL_ENGINE_TIMELINE): spans add their time
// to their phase, the rest of the plans' time is "other", the domain
// communicator's launches count as domain steps, and the plan data's
// copies and reductions as theirs.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "engine/host/host_plan_data.h"
#include "engine/host/host_timeline.h"

namespace hetccl {
namespace {

using namespace std::chrono_literals;

// The milliseconds the summary gives `phase`.
double millisecondsOf(const std::string& summary, const std::string& phase) {
  const size_t at = summary.find(phase + " ");
  if (at == std::string::npos) return -1;
  return std::stod(summary.substr(at + phase.size() + 1));
}

TEST(HostTimeline, SpansGoToTheirPhaseAndTheRestIsOther) {
  HostTimeline timeline;
  for (int plan = 0; plan < 2; ++plan) {
    const auto start = HostTimeline::Clock::now();
    {
      HostTimeline::Span span(&timeline, HostPhase::TransferWaits);
      std::this_thread::sleep_for(40ms);
    }
    std::this_thread::sleep_for(20ms);
    timeline.addPlan(HostTimeline::Clock::now() - start);
  }
  const std::string summary = timeline.summary();
  EXPECT_GE(millisecondsOf(summary, "waits for transfers across domains"), 80)
      << summary;
  EXPECT_LT(millisecondsOf(summary, "waits for transfers across domains"), 400)
      << summary;
  EXPECT_GE(millisecondsOf(summary, "other"), 40) << summary;
  EXPECT_EQ(millisecondsOf(summary, "domain steps"), 0) << summary;
  EXPECT_NE(summary.find("; 2 plan(s) in "), std::string::npos) << summary;
}

TEST(HostTimeline, ANullTimelineTimesNothing) {
  HostTimeline::Span span(nullptr, HostPhase::Copies);  // must not crash
}

// Sleeps in every launch.
class SlowSteps : public Executor {
 public:
  void launch(const std::vector<Op>&, StreamHandle) override {
    std::this_thread::sleep_for(30ms);
    ++launches;
  }
  bool drain(double) override { return true; }
  int launches = 0;
};

TEST(HostTimeline, DomainCommunicatorLaunchesAreDomainSteps) {
  HostTimeline timeline;
  SlowSteps steps;
  TimedHostDomainSteps timed(steps, timeline);
  const auto start = HostTimeline::Clock::now();
  timed.launch({Op{}}, nullptr);
  timed.launch({Op{}}, nullptr);
  timeline.addPlan(HostTimeline::Clock::now() - start);
  EXPECT_EQ(steps.launches, 2);
  const std::string summary = timeline.summary();
  EXPECT_GE(millisecondsOf(summary, "domain steps"), 60) << summary;
  EXPECT_EQ(millisecondsOf(summary, "reductions"), 0) << summary;
}

TEST(HostTimeline, PlanDataCopiesAndReductionsAreTimed) {
  HostTimeline timeline;
  HostPlanData data(0, &timeline);
  std::vector<float> a(1 << 22, 1.0f), b(1 << 22, 2.0f), out(1 << 22);
  const auto start = HostTimeline::Clock::now();
  data.copy(out.data(), a.data(), a.size() * sizeof(float));
  const void* sources[] = {a.data(), b.data()};
  Reduction sum;
  sum.dtype = ncclFloat32;
  data.reduce(out.data(), sources, 2, a.size(), sum);
  timeline.addPlan(HostTimeline::Clock::now() - start);
  EXPECT_EQ(out[12345], 3.0f);
  const std::string summary = timeline.summary();
  EXPECT_GT(millisecondsOf(summary, "copies"), 0) << summary;
  EXPECT_GT(millisecondsOf(summary, "reductions"), 0) << summary;
  EXPECT_EQ(millisecondsOf(summary, "waits for transfers across domains"), 0)
      << summary;
}

}  // namespace
}  // namespace hetccl
