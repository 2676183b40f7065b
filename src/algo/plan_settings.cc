#include "algo/plan_settings.h"

namespace hetccl {

PlanSettings PlanSettings::fromEnvironment() {
  PlanSettings s;
  s.chunkBytes = readBytes(kChunk);
  s.oneShotMaxBytes = readBytes(kOneShotMax);
  s.hostThreads = static_cast<int>(readInteger(kHostThreads));
  return s;
}

}  // namespace hetccl
