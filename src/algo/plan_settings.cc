#include "algo/plan_settings.h"

namespace hetccl {

PlanSettings PlanSettings::fromEnvironment() {
  PlanSettings s;
  s.chunkBytes = readBytes(kChunk);
  s.oneShotMaxBytes = readBytes(kOneShotMax);
  return s;
}

}  // namespace hetccl
