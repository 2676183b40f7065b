// NVIDIA's NCCL as a domain back-end: NVIDIA GPU ranks, call for call on
// the caller's stream (NcclApiComm over the process's NCCL).
#pragma once

#include "domain/nccl_api/nccl_api_backend.h"

namespace hetccl {

const NcclApiBackend& ncclBackend();

}  // namespace hetccl
