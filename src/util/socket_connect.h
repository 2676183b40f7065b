// Connecting to a listener that may not be up yet: retries with back-off
// until a deadline, or fails at once where a refusal means the other end
// is gone.
#pragma once

#include "util/deadline.h"
#include "util/socket.h"
#include "util/socket_address.h"

namespace hetccl {

// Whether a refused connection means "not up yet" or "gone".
enum class ConnectMode {
  kWaitForListener,  // retry refusals until the deadline
  kListenerIsUp,     // the listener is known to exist: a refusal means its
                     // process is gone (ncclRemoteError, at once)
};

// Connects to `address`; by default retries while nothing listens there
// yet (connection refused) until the deadline. `what` names the other end
// in messages ("the bootstrap root").
Socket connectTo(const SocketAddress& address, const Deadline& deadline,
                 const AbortFlags& abort, const char* what = "peer",
                 ConnectMode mode = ConnectMode::kWaitForListener);

}  // namespace hetccl
