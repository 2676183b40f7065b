#include "domain/nccl_api/nccl_api_backend.h"

namespace hetccl {

const NcclApiBackend* ncclApiBackendFor(RuntimeKind runtime) {
  return dynamic_cast<const NcclApiBackend*>(&domainBackendFor(runtime));
}

std::vector<const NcclApiLibrary*> loadedNcclApiLibraries() {
  std::vector<const NcclApiLibrary*> loaded;
  for (const DomainBackend* backend : registeredDomainBackends())
    if (auto* ncclApi = dynamic_cast<const NcclApiBackend*>(backend))
      if (const NcclApiLibrary* library = ncclApi->loadedLibrary())
        loaded.push_back(library);
  return loaded;
}

}  // namespace hetccl
