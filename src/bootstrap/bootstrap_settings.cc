#include "bootstrap/bootstrap_settings.h"

namespace hetccl {

BootstrapSettings BootstrapSettings::fromEnvironment() {
  BootstrapSettings s;
  s.timeoutSeconds = readSeconds(kBootstrapTimeout);
  return s;
}

}  // namespace hetccl
