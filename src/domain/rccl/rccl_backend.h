// AMD's RCCL as a domain back-end: AMD GPU ranks, call for call on
// the caller's stream (NcclApiComm over the process's RCCL).
#pragma once

#include "domain/nccl_api/nccl_api_backend.h"

namespace hetccl {

const NcclApiBackend& rcclBackend();

}  // namespace hetccl
