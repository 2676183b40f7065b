#include "core/settings.h"

#include "core/all_params.h"

namespace hetccl {

// The Same parameters from the list of all, not field by field: a
// parameter declared Same is compared across ranks without code of its
// own.
Settings Settings::fromEnvironment() {
  Settings s;
  s.bootstrap = BootstrapSettings::fromEnvironment();
  s.transports = TransportSettings::fromEnvironment();
  s.backends = BackendSettings::fromEnvironment();
  s.plans = PlanSettings::fromEnvironment();
  s.gpuEngine = GpuEngineSettings::fromEnvironment();
  s.timeoutSeconds = readSeconds(kTimeout);
  s.hostId = readString(kHostId);
  s.domains = readString(kDomains).value_or("");
  s.checkCalls = readFlag(kCheckCalls);
  s.statusDir = readString(kStatusDir);
  s.mustAgree = readMustAgree(allParams());
  return s;
}

}  // namespace hetccl
