#include "algo/plan_settings.h"

#include "runtime/runtime_params.h"

namespace hetccl {

PlanSettings PlanSettings::fromEnvironment() {
  PlanSettings s;
  s.chunkBytes = readBytes(kChunk);
  s.oneShotMaxBytes = readBytes(kOneShotMax);
  s.hostThreads = static_cast<int>(readInteger(kHostThreads));
  s.timeline = readFlag(kEngineTimeline);
  return s;
}

}  // namespace hetccl
