#include "transport/tcp/tcp_settings.h"

namespace hetccl {

// The bounds are the parameter table's (util/params.def).
TcpSettings TcpSettings::from(const Settings& settings) {
  TcpSettings s;
  s.socketsPerLink = settings.tcpSocketsPerLink;
  s.threads = settings.tcpThreads;
  s.stripeBytes = settings.tcpStripeBytes;
  s.socketBufferBytes = settings.tcpSocketBufferBytes;
  s.pollMicroseconds = settings.tcpPollMicroseconds;
  s.setupTimeoutSeconds = settings.bootstrapTimeoutSeconds;
  return s;
}

}  // namespace hetccl
