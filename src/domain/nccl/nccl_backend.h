// NVIDIA's NCCL as a domain back-end: NVIDIA GPU ranks, call for call on
// the caller's stream (NcclApiComm over the process's NCCL).
#pragma once

#include "domain/domain_backend.h"

namespace hetccl {

const DomainBackend& ncclBackend();

}  // namespace hetccl
