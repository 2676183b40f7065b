#include "core/peer_info.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>

#include "algo/domains.h"
#include "runtime/runtime.h"
#include "util/settings.h"

namespace hetccl {
namespace {

uint64_t fnv1a(const std::string& text,
               uint64_t hash = 1469598103934665603ull) {
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

// Ranks share memory when they share a kernel (boot id) and their shared
// memory is not separated; network namespaces stand for separate hosts in
// tests, so they count too. HETCCL_HOSTID overrides.
uint64_t computeHostId(const std::optional<std::string>& forced) {
  if (forced) return fnv1a(*forced);
  std::string boot;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;
  struct stat netns {};
  std::string ns;
  if (stat("/proc/self/ns/net", &netns) == 0) ns = std::to_string(netns.st_ino);
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  return fnv1a(boot + "/" + ns + "/" + host);
}

}  // namespace

PeerInfo PeerInfo::local(int rank, int nranks, std::optional<GpuDevice> gpu,
                         const Settings& settings,
                         std::optional<int> inheritedLabel) {
  PeerInfo info{};
  info.hostId = computeHostId(settings.hostId);
  info.pid = static_cast<int32_t>(getpid());
  info.runtime = static_cast<int32_t>(gpu ? gpu->runtime : RuntimeKind::Host);
  info.device = gpu ? gpu->ordinal : -1;
  info.domainLabel = inheritedLabel
                         ? *inheritedLabel
                         : domainLabelFromSpec(settings.domains, rank, nranks);
  gethostname(info.hostname, sizeof(info.hostname) - 1);
  return info;
}

}  // namespace hetccl
