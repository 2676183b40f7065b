#include "transport/ucx/ucx_settings.h"

namespace hetccl {

UcxSettings UcxSettings::fromEnvironment() {
  UcxSettings s;
  s.lanes = static_cast<int>(readInteger(kUcxLanes));
  s.partBytes = readBytes(kUcxPart);
  s.gpu = readGpuBuffers(kUcxGpu);
  return s;
}

}  // namespace hetccl
