#include "transport/tcp/tcp_settings.h"

namespace hetccl {

// The bounds are tcp_params.def's.
TcpSettings TcpSettings::fromEnvironment() {
  TcpSettings s;
  s.socketsPerLink = static_cast<int>(readInteger(kTcpSockets));
  s.threads = static_cast<int>(readInteger(kTcpThreads));
  s.stripeBytes = readBytes(kTcpChunk);
  s.socketBufferBytes = static_cast<int>(readInteger(kTcpBuffer));
  s.pollMicroseconds = static_cast<int>(readInteger(kTcpPollUs));
  return s;
}

}  // namespace hetccl
