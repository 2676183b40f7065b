// The shm transport's entry in the registry: links between ranks of one
// host through shared memory (ShmLinkSet).
#pragma once

#include "transport/transport.h"

namespace hetccl {

const Transport& shmTransport();

}  // namespace hetccl
