#include "bootstrap/bootstrap_settings.h"

namespace hetccl {

BootstrapSettings BootstrapSettings::fromEnvironment() {
  return {readSeconds(kBootstrapTimeout), readSeconds(kStallWarn)};
}

}  // namespace hetccl
