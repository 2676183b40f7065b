#include "api/hand_back.h"

#include "domain/domain_backend.h"

namespace hetccl {

const NcclApi* ncclCalling(const void* caller) {
  for (const DomainBackend* backend : registeredDomainBackends())
    if (const NcclApiLibrary* library = backend->loadedLibrary())
      if (library->contains(caller)) return &library->api();
  return nullptr;
}

}  // namespace hetccl
