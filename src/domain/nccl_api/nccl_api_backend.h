// A domain back-end whose vendor library exports the NCCL API (NVIDIA's
// NCCL, AMD's RCCL). Such a library can do two things for HetCCL that no
// communicator asks for: allocate memory for the current device
// (ncclMemAlloc, which has no communicator) and be handed back the calls
// it makes to its own API (api/hand_back.h). A back-end of another kind
// implements DomainBackend alone.
#pragma once

#include <vector>

#include "domain/domain_backend.h"
#include "domain/nccl_api/nccl_api_library.h"

namespace hetccl {

class NcclApiBackend : public DomainBackend {
 public:
  // Loaded on first use; throws if it cannot be found.
  virtual const NcclApiLibrary& library() const = 0;
  // The library if it is loaded already, else null; never loads.
  virtual const NcclApiLibrary* loadedLibrary() const = 0;
};

// The back-end of `runtime`'s domains if its library exports the NCCL API,
// else null (the host collectives).
const NcclApiBackend* ncclApiBackendFor(RuntimeKind runtime);
// Every NCCL-API library loaded so far; loads none.
std::vector<const NcclApiLibrary*> loadedNcclApiLibraries();

}  // namespace hetccl
