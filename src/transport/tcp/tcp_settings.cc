#include "transport/tcp/tcp_settings.h"

#include <algorithm>
#include <cstdint>

#include "util/env.h"
#include "util/log.h"

namespace hetccl {
namespace {

// Clamps an environment value into [low, high], warning when it had to.
int64_t clampedEnv(const char* name, int64_t defaultValue, int64_t low,
                   int64_t high) {
  int64_t value = envInt(name, defaultValue);
  int64_t clamped = std::clamp(value, low, high);
  if (clamped != value)
    LOG_WARN(kLogNet, "%s=%lld is out of range [%lld, %lld]; using %lld", name,
             static_cast<long long>(value), static_cast<long long>(low),
             static_cast<long long>(high), static_cast<long long>(clamped));
  return clamped;
}

}  // namespace

TcpSettings TcpSettings::fromEnv() {
  TcpSettings s;
  s.socketsPerLink = static_cast<int>(clampedEnv(
      "HETCCL_TCP_SOCKETS", s.socketsPerLink, 1, kMaxTcpSocketsPerLink));
  s.stripeBytes = static_cast<size_t>(
      clampedEnv("HETCCL_TCP_CHUNK", static_cast<int64_t>(s.stripeBytes),
                 kMinTcpStripeBytes, kMaxTcpStripeBytes));
  s.socketBufferBytes = static_cast<int>(clampedEnv(
      "HETCCL_TCP_BUFFER", s.socketBufferBytes, 0, int64_t{1} << 30));
  s.setupTimeoutSeconds =
      envSeconds("HETCCL_BOOTSTRAP_TIMEOUT", s.setupTimeoutSeconds);
  return s;
}

}  // namespace hetccl
