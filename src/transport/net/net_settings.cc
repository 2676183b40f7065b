#include "transport/net/net_settings.h"

namespace hetccl {

NetSettings NetSettings::fromEnvironment() {
  NetSettings s;
  s.partBytes = readBytes(kNetPart);
  return s;
}

}  // namespace hetccl
