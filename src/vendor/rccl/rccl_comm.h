// The RCCL vendor adaptor: a domain of AMD GPU ranks runs its operations
// on a real RCCL communicator, call for call, on the caller's stream,
// exactly as an NVIDIA domain does on NCCL. RCCL's API is NCCL's, so this
// is NcclComm over RCCL's table with the HIP device made current.
#pragma once

#include "util/oob.h"
#include "vendor/nccl/nccl_comm.h"
#include "vendor/rccl/rccl_library.h"

namespace hetccl {

class RcclComm : public NcclComm {
 public:
  // Collective over `oob`: every rank makes HIP device `device` current,
  // rank 0 asks RCCL for a unique id, and every rank joins RCCL's
  // communicator.
  RcclComm(Oob& oob, const RcclLibrary& rccl, int device);
};

// The process's RCCL, loaded on first use and known to ncclCalling; throws
// if there is none.
const RcclLibrary& processRccl();

}  // namespace hetccl
