#include "transport/ucx/ucx_settings.h"

#include "transport/lane_placement.h"

namespace hetccl {

UcxSettings UcxSettings::fromEnvironment() {
  UcxSettings s;
  s.lanes = static_cast<int>(readInteger(kUcxLanes));
  s.partBytes = readBytes(kUcxPart);
  s.gpu = readGpuBuffers(kUcxGpu);
  s.splitBytes = readSmallestPart(kUcxSplit);
  return s;
}

}  // namespace hetccl
