#include "transport/net/net_settings.h"

#include "transport/lane_placement.h"

namespace hetccl {

NetSettings NetSettings::fromEnvironment() {
  NetSettings s;
  s.partBytes = readBytes(kNetPart);
  s.devices = readString(kNetDevices).value_or("auto");
  s.gpu = readGpuBuffers(kNetGpu);
  s.splitBytes = readSmallestPart(kNetSplit);
  return s;
}

}  // namespace hetccl
