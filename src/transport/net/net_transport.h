// The net transport's entry in the registry: links between ranks on any
// hosts through an NCCL network plugin (libnccl-net*.so), from the net
// module.
#pragma once

#include "transport/transport.h"

namespace hetccl {

const Transport& netTransport();

}  // namespace hetccl
