#include "api/hand_back.h"

#include "domain/nccl_api/nccl_api_backend.h"

namespace hetccl {

const NcclApi* ncclCalling(const void* caller) {
  for (const NcclApiLibrary* library : loadedNcclApiLibraries())
    if (library->contains(caller)) return &library->api();
  return nullptr;
}

}  // namespace hetccl
