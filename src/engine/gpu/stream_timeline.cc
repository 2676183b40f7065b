#include "engine/gpu/stream_timeline.h"

#include <cstdio>

namespace hetccl {
namespace {

const char* phaseName(StreamPhase phase) {
  switch (phase) {
    case StreamPhase::CallerWork:
      return "waiting for the caller's stream";
    case StreamPhase::DomainSteps:
      return "domain steps";
    case StreamPhase::TransferWaits:
      return "waits for transfers across domains";
    case StreamPhase::Reductions:
      return "reductions";
    case StreamPhase::OtherCopies:
      return "other copies";
    case StreamPhase::End:
      break;
  }
  return "end";
}

}  // namespace

StreamTimeline::StreamTimeline(const DeviceModule& module, void* stream,
                               size_t marks)
    : stream_(stream) {
  for (size_t i = 0; i < marks; ++i)
    events_.push_back(
        std::make_unique<DeviceEvent>(module, DeviceEvent::Timing::On));
}

void StreamTimeline::beginLaunch() {
  addUpLaunch();
  mark(StreamPhase::CallerWork);
}

// Consecutive marks of one phase make one interval. The last event is
// kept for End.
void StreamTimeline::mark(StreamPhase phase) {
  if (!phases_.empty() && phases_.back() == phase) return;
  const size_t room = events_.size() - phases_.size();
  if (room == 0 || (room == 1 && phase != StreamPhase::End)) {
    cut_ = true;
    return;
  }
  events_[phases_.size()]->record(stream_);
  phases_.push_back(phase);
}

void StreamTimeline::addUpLaunch() {
  if (phases_.size() < 2) return;
  events_[phases_.size() - 1]->synchronize();
  for (size_t i = 0; i + 1 < phases_.size(); ++i)
    milliseconds_[static_cast<size_t>(phases_[i])] +=
        events_[i + 1]->millisecondsSince(*events_[i]);
  if (cut_) ++launchesCut_;
  ++launches_;
  phases_.clear();
  cut_ = false;
}

std::string StreamTimeline::summary() {
  addUpLaunch();
  double busy = 0;
  for (size_t p = 1; p < milliseconds_.size(); ++p) busy += milliseconds_[p];
  std::string text;
  char part[160];
  for (size_t p = 1; p < milliseconds_.size(); ++p) {
    std::snprintf(part, sizeof(part), "%s%s %.1f ms (%.0f%%)",
                  text.empty() ? "" : ", ",
                  phaseName(static_cast<StreamPhase>(p)), milliseconds_[p],
                  busy > 0 ? 100 * milliseconds_[p] / busy : 0.0);
    text += part;
  }
  std::snprintf(part, sizeof(part), "; %s %.1f ms; %zu launch(es)%s",
                phaseName(StreamPhase::CallerWork), milliseconds_[0], launches_,
                launchesCut_ ? " (some with more steps than marks)" : "");
  return text + part;
}

}  // namespace hetccl
