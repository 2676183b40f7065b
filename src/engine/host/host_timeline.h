// What a CPU rank's plans spend their time on (HETCCL_ENGINE_TIMELINE): a
// plan runs on one thread, one step at a time, so the wall-clock time of
// its steps splits the plan's whole time: the steps inside the domain (the
// host domain's collectives), the waits for transfers across domains,
// reductions and copies (with their helper threads), and the rest (posting
// transfers, bookkeeping). Summed over the plans; logged when the
// communicator goes, as the GPU engine's stream time is.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <string>

#include "op/executor.h"

namespace hetccl {

enum class HostPhase {
  DomainSteps,    // the domain communicator's collectives and transfers
  TransferWaits,  // waiting for transfers across domains
  Reductions,     // combining the domains' partials
  Copies,         // the plans' own copies (layouts, staging)
  Count,
};

// Only the plan's thread adds to it; summary() is read once the plans are
// done.
class HostTimeline {
 public:
  using Clock = std::chrono::steady_clock;

  // Adds the time from its construction to its end to `phase`.
  class Span {
   public:
    Span(HostTimeline* timeline, HostPhase phase)
        : timeline_(timeline), phase_(phase), start_(Clock::now()) {}
    ~Span() {
      if (timeline_) timeline_->add(phase_, Clock::now() - start_);
    }
    Span(const Span&) = delete;
    Span& operator=(const Span&) = delete;

   private:
    HostTimeline* const timeline_;
    const HostPhase phase_;
    const Clock::time_point start_;
  };

  void add(HostPhase phase, Clock::duration elapsed) {
    spent_[static_cast<size_t>(phase)] += elapsed;
  }
  void addPlan(Clock::duration elapsed) {
    planTime_ += elapsed;
    ++plans_;
  }
  // "domain steps 12.3 ms (40%), ..., other 1.0 ms (3%); 5 plan(s) in
  // 30.8 ms": the phases and the rest as parts of the plans' time.
  std::string summary() const;

 private:
  std::array<Clock::duration, static_cast<size_t>(HostPhase::Count)> spent_{};
  Clock::duration planTime_{};
  size_t plans_ = 0;
};

// A domain communicator whose launches (run before they return, on a CPU
// rank's plan thread) count as domain steps.
class TimedHostDomainSteps : public Executor {
 public:
  TimedHostDomainSteps(Executor& steps, HostTimeline& timeline)
      : steps_(steps), timeline_(timeline) {}
  void launch(const std::vector<Op>& ops, StreamHandle stream) override {
    HostTimeline::Span span(&timeline_, HostPhase::DomainSteps);
    steps_.launch(ops, stream);
  }
  bool drain(double timeoutSeconds) override {
    return steps_.drain(timeoutSeconds);
  }
  ncclResult_t asyncError() const override { return steps_.asyncError(); }

 private:
  Executor& steps_;
  HostTimeline& timeline_;
};

}  // namespace hetccl
