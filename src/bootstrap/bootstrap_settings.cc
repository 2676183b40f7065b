#include "bootstrap/bootstrap_settings.h"

namespace hetccl {

BootstrapSettings BootstrapSettings::fromEnvironment() {
  BootstrapSettings s;
  s.timeoutSeconds = readSeconds(kBootstrapTimeout);
  s.stallWarnSeconds = readSeconds(kStallWarn);
  return s;
}

}  // namespace hetccl
