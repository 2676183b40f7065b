#include "engine/host/host_timeline.h"

#include <cstdio>

namespace hetccl {
namespace {

const char* phaseName(HostPhase phase) {
  switch (phase) {
    case HostPhase::DomainSteps:
      return "domain steps";
    case HostPhase::TransferWaits:
      return "waits for transfers across domains";
    case HostPhase::Reductions:
      return "reductions";
    case HostPhase::Copies:
      return "copies";
    case HostPhase::Count:
      break;
  }
  return "other";
}

double milliseconds(HostTimeline::Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

}  // namespace

std::string HostTimeline::summary() const {
  const double total = milliseconds(planTime_);
  double phases = 0;
  std::string text;
  char part[160];
  auto append = [&](const char* name, double ms) {
    std::snprintf(part, sizeof(part), "%s%s %.1f ms (%.0f%%)",
                  text.empty() ? "" : ", ", name, ms,
                  total > 0 ? 100 * ms / total : 0.0);
    text += part;
  };
  for (size_t p = 0; p < spent_.size(); ++p) {
    append(phaseName(static_cast<HostPhase>(p)), milliseconds(spent_[p]));
    phases += milliseconds(spent_[p]);
  }
  append("other", total > phases ? total - phases : 0.0);
  std::snprintf(part, sizeof(part), "; %zu plan(s) in %.1f ms", plans_, total);
  return text + part;
}

}  // namespace hetccl
