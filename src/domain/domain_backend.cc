#include "domain/domain_backend.h"

#include "domain/host/host_backend.h"
#include "domain/nccl/nccl_backend.h"
#include "domain/rccl/rccl_backend.h"
#include "util/error.h"

namespace hetccl {

const std::vector<const DomainBackend*>& registeredDomainBackends() {
  // One line per back-end.
  static const std::vector<const DomainBackend*> backends = {
      &hostBackend(),
      &ncclBackend(),
      &rcclBackend(),
  };
  return backends;
}

BackendSettings BackendSettings::fromEnvironment() {
  BackendSettings s;
  s.host = ShmSettings::fromEnvironment();
  return s;
}

const DomainBackend& domainBackendFor(RuntimeKind runtime) {
  for (const DomainBackend* backend : registeredDomainBackends())
    if (backend->runtime() == runtime) return *backend;
  fail(ncclInternalError, "no domain back-end for %s ranks",
       runtimeKindName(runtime));
}

}  // namespace hetccl
