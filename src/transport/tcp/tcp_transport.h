// The tcp transport's entry in the registry: links between ranks on any
// hosts over several sockets each (TcpLinkSet).
#pragma once

#include "transport/transport.h"

namespace hetccl {

const Transport& tcpTransport();

}  // namespace hetccl
