// The host collectives as a domain back-end: CPU ranks of one host, over shared
// memory (HostComm).
#pragma once

#include "domain/domain_backend.h"

namespace hetccl {

const DomainBackend& hostBackend();

}  // namespace hetccl
