// The ucx transport's entry in the registry: links between ranks on any
// hosts through UCX (RDMA where the machine has it), from the UCX module.
#pragma once

#include "transport/transport.h"

namespace hetccl {

const Transport& ucxTransport();

}  // namespace hetccl
