// Connection setup of the tcp transport: the lower rank of each pair
// connects its sockets to the higher rank's listener and opens each with a
// hello; the higher rank accepts (AuthenticatedAcceptor: the secret, a cap
// on connections that have not said hello, a deadline for those that never
// do), and turns strangers away without giving up.
#pragma once

#include <map>
#include <vector>

#include "util/deadline.h"
#include "util/listener.h"
#include "util/secret.h"
#include "util/socket.h"
#include "util/socket_address.h"

namespace hetccl {

// What one rank needs to know to build its links.
struct TcpConnectPlan {
  int rank = 0;
  std::vector<int> peers;                // sorted, unique, without `rank`
  std::vector<SocketAddress> addresses;  // every rank's listener, by rank
  Secret secret{};
  int socketsPerLink = 1;
  int socketBufferBytes = 0;  // 0: leave the kernel's autotuning alone
  double timeoutSeconds = 0;  // 0: no limit
};

// Each peer's sockets, in socket-index order.
using TcpConnections = std::map<int, std::vector<Socket>>;

// Connects to the higher peers, then accepts the lower peers' connections
// on `listener` until all arrived; the listener closes on return. Throws
// ncclSystemError naming the missing peers when the plan's timeout passes or
// `abort` is raised.
TcpConnections connectTcpPeers(const TcpConnectPlan& plan, Listener listener,
                               const AbortFlags& abort);

// Requests `bytes` of send and receive buffer on `fd` where the kernel
// allows that much; otherwise leaves its autotuning, which a capped fixed
// size would only make worse.
void setTcpBufferSizes(int fd, int bytes);

}  // namespace hetccl
