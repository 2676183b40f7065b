#include "core/peer_info.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>

#include "algo/domains.h"
#include "core/settings.h"
#include "hetccl_version.h"
#include "runtime/runtime.h"
#include "util/comma_list.h"
#include "util/error.h"
#include "util/settings_agreement.h"

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

// Same value <=> the same running kernel (machine).
std::string bootId() {
  std::string boot;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;
  return boot;
}

// Ranks share memory when they share a kernel (boot id) and their shared
// memory is not separated; network namespaces stand for separate hosts in
// tests, so they count too. HETCCL_HOSTID overrides: one name for this
// process, or a comma-separated list with one per rank (rank r takes entry
// r), which lays out pretend hosts for a whole job from one variable.
uint64_t computeHostId(const std::optional<std::string>& forced, int rank,
                       int nranks) {
  if (forced) {
    if (forced->find(',') == std::string::npos) return fnv1a(*forced);
    std::vector<std::string> names = splitCommaList(*forced);
    if (static_cast<int>(names.size()) != nranks)
      fail(ncclInvalidArgument,
           "HETCCL_HOSTID=\"%s\" has %zu entries for %d ranks (expected one "
           "host name, or one entry per rank)",
           forced->c_str(), names.size(), nranks);
    return fnv1a(names[rank]);
  }
  const std::string boot = bootId();
  struct stat netns {};
  std::string ns;
  if (stat("/proc/self/ns/net", &netns) == 0) ns = std::to_string(netns.st_ino);
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  return fnv1a(boot + "/" + ns + "/" + host);
}

// The GPU as one number, its bus id on this machine; 0 where there is
// none to share (a CPU rank, an emulated GPU, a runtime that cannot say).
uint64_t computeGpuId(const std::optional<GpuDevice>& gpu) {
  if (!gpu || gpu->emulated) return 0;
  char busId[32] = {0};
  if (deviceModuleOf(*gpu).api().deviceBusId(gpu->ordinal, busId,
                                             sizeof(busId) - 1) != 0)
    return 0;
  return fnv1a(bootId() + "/" + busId);
}

}  // namespace

PeerInfo PeerInfo::local(int rank, int nranks, std::optional<GpuDevice> gpu,
                         const Settings& settings,
                         std::optional<Placement> inherited) {
  PeerInfo info{};
  info.hostId = inherited ? inherited->hostId
                          : computeHostId(settings.hostId, rank, nranks);
  info.pid = static_cast<int32_t>(getpid());
  info.runtime = static_cast<int32_t>(gpu ? gpu->runtime : RuntimeKind::Host);
  info.device = gpu ? gpu->ordinal : -1;
  info.gpuId = computeGpuId(gpu);
  info.domainLabel = inherited
                         ? inherited->domainLabel
                         : domainLabelFromSpec(settings.domains, rank, nranks);
  gethostname(info.hostname, sizeof(info.hostname) - 1);
  std::strncpy(info.release, HETCCL_RELEASE, sizeof(info.release) - 1);
  info.protocolVersion = kCommProtocolVersion;
  info.settingsDigest = mustAgreeDigest(settings.mustAgree);
  return info;
}

// Compared with rank 0, so that every rank names the same pair.
void checkSameBuild(const std::vector<PeerInfo>& peers) {
  auto text = [](const char* field, size_t size) {
    return std::string(field, strnlen(field, size));
  };
  const PeerInfo& first = peers.at(0);
  for (size_t r = 1; r < peers.size(); ++r) {
    const PeerInfo& peer = peers[r];
    if (peer.protocolVersion == first.protocolVersion &&
        std::strncmp(peer.release, first.release, sizeof(peer.release)) == 0)
      continue;
    fail(ncclInvalidUsage,
         "rank 0 (host %s) runs HetCCL %s (protocol %u) and rank %zu (host "
         "%s) runs HetCCL %s (protocol %u): every node of a communicator "
         "needs the same HetCCL release",
         text(first.hostname, sizeof(first.hostname)).c_str(),
         text(first.release, sizeof(first.release)).c_str(),
         first.protocolVersion, r,
         text(peer.hostname, sizeof(peer.hostname)).c_str(),
         text(peer.release, sizeof(peer.release)).c_str(),
         peer.protocolVersion);
  }
}

}  // namespace hetccl
