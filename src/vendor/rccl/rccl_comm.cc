#include "vendor/rccl/rccl_comm.h"

#include "runtime/hip_probe.h"

namespace hetccl {

RcclComm::RcclComm(Oob& oob, const RcclLibrary& rccl, int device)
    : NcclComm(oob, rccl, device, setCurrentHipDevice) {}

const RcclLibrary& processRccl() { return processLibrary<RcclLibrary>(); }

}  // namespace hetccl
