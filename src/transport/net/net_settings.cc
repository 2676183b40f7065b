#include "transport/net/net_settings.h"

namespace hetccl {

NetSettings NetSettings::fromEnvironment() {
  NetSettings s;
  s.partBytes = readBytes(kNetPart);
  s.devices = readString(kNetDevices).value_or("auto");
  s.gpu = readGpuBuffers(kNetGpu);
  return s;
}

}  // namespace hetccl
