// What the GPU engine's stream spends its time on (HETCCL_ENGINE_TIMELINE):
// before each piece of work it enqueues, the engine marks the stream with a
// timed event naming the piece's phase, so the stream's time from one mark
// to the next belongs to the first one's phase. The stream runs one thing
// at a time, so the phases split its whole time: what the domain steps,
// the waits for transfers across domains (the network's and the staging
// copies' exposed time) and the reductions cost. Summed over the
// engine's launches; reading a launch's events waits for it, so the next
// launch is enqueued only once the previous one finished.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "op/executor.h"
#include "runtime/device/device_resources.h"

namespace hetccl {

enum class StreamPhase {
  CallerWork,     // waiting for the caller's stream to reach the launch
  DomainSteps,    // the vendor library (or local copies) inside the domain
  TransferWaits,  // waiting for transfers across domains (their staging
                  // copies run on streams of their own meanwhile, but
                  // for small ones, copied by kernels on this stream)
  Reductions,     // combining the domains' partials
  OtherCopies,    // the plans' own copies on the GPU
  End,            // the launch's last mark
};

class StreamTimeline {
 public:
  // At most `marks` marks per launch; later ones are dropped (their time
  // goes to the phase marked last).
  StreamTimeline(const DeviceModule& module, void* stream, size_t marks);

  // Adds up the previous launch (waiting for it), then marks the start.
  void beginLaunch();
  void mark(StreamPhase phase);
  void endLaunch() { mark(StreamPhase::End); }
  // "domain steps 12.3 ms (40%), ..." over every launch so far (waiting
  // for the last one); the caller's work is left out of the percentages.
  std::string summary();

 private:
  void addUpLaunch();

  void* stream_;
  std::vector<std::unique_ptr<DeviceEvent>> events_;
  std::vector<StreamPhase> phases_;  // of the events recorded, in order
  std::array<double, static_cast<size_t>(StreamPhase::End)> milliseconds_{};
  size_t launches_ = 0;
  bool cut_ = false;        // this launch ran out of marks
  size_t launchesCut_ = 0;  // launches that did
};

// A domain communicator whose launches are marked as domain steps.
class TimedDomainSteps : public Executor {
 public:
  TimedDomainSteps(Executor& steps, StreamTimeline& timeline)
      : steps_(steps), timeline_(timeline) {}
  void launch(const std::vector<Op>& ops, StreamHandle stream) override {
    timeline_.mark(StreamPhase::DomainSteps);
    steps_.launch(ops, stream);
  }
  bool drain(double timeoutSeconds) override {
    return steps_.drain(timeoutSeconds);
  }

 private:
  Executor& steps_;
  StreamTimeline& timeline_;
};

// Marks `timeline` unless there is none.
inline void markPhase(StreamTimeline* timeline, StreamPhase phase) {
  if (timeline) timeline->mark(phase);
}

}  // namespace hetccl
