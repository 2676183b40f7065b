// Loud fallbacks: where a communicator takes a slower path than the
// machine offers, each rank's log holds one WARN line saying what to
// install or set, and where it does not (the path was forced knowingly,
// or is the fastest there is) no such line. Each case runs an all-reduce
// (the communicator works either way), then every rank counts in its own
// log the lines of each kind of warning: the case's kind exactly once,
// every other kind never.
#include <gtest/gtest.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "harness/check.h"
#include "harness/domains.h"
#include "harness/files_and_commands.h"
#include "harness/nccl_handles.h"
#include "harness/quick_collectives.h"
#include "harness/run_ranks.h"

namespace hetccl::mp {
namespace {

// What identifies each kind of warning in a log line.
enum Warning {
  kNone = -1,
  kTcpBetweenHosts,
  kGpuDirectOff,
  kUcxGpuStaged,
  kInterfaceStaysOnHost,
  kWarningKinds
};

const char* const kMarkers[kWarningKinds] = {
    " on other hosts use tcp: ",
    "HETCCL_GPU_DIRECT=0: every collective is staged",
    "are staged through host memory and a proxy thread: HETCCL_UCX_GPU=0",
    "which other hosts cannot reach, though ",
};

struct FallbackCase {
  std::string name;
  DomainLayout layout;
  Warning expected;
  bool needsUcx = false;
  // The case needs an interface besides loopback and bridges.
  bool needsOtherInterface = false;
};

void PrintTo(const FallbackCase& c, std::ostream* out) { *out << c.name; }

const std::map<std::string, std::string> kPretendHosts = {
    {"HETCCL_HOSTID", "hostA,hostB"}};

std::map<std::string, std::string> with(
    std::map<std::string, std::string> env,
    const std::map<std::string, std::string>& more) {
  env.insert(more.begin(), more.end());
  return env;
}

DomainLayout cpuDomains(std::map<std::string, std::string> env) {
  DomainLayout layout = domainsByLabel({0, 1});
  layout.env = std::move(env);
  return layout;
}

DomainLayout gpuDomains(std::map<std::string, std::string> env) {
  DomainLayout layout = emulatedGpuDomains({0, 1});
  layout.env = std::move(env);
  return layout;
}

DomainLayout ucxGpuBuffers(std::map<std::string, std::string> env) {
  DomainLayout layout = ucxGpuBuffersBetweenPretendHosts({0, 1});
  layout.env = with(std::move(env), layout.env);
  return layout;
}

std::vector<FallbackCase> fallbackCases() {
  // UCX_TLS=tcp: no RDMA transport, on any machine, and the line names it.
  const auto autoTcp = with(kPretendHosts, {{"UCX_TLS", "tcp"}});
  const auto lo = with(kPretendHosts, {{"HETCCL_SOCKET_IFNAME", "lo"},
                                       {"HETCCL_TRANSPORT", "tcp"}});
  return {
      {"AutoTcpBetweenHosts", cpuDomains(autoTcp), kTcpBetweenHosts},
      {"ForcedTcpBetweenHosts",
       cpuDomains(with(autoTcp, {{"HETCCL_TRANSPORT", "tcp"}})), kNone},
      {"AutoShmOnOneHost", cpuDomains({}), kNone},
      {"GpuDirectOff", gpuDomains({{"HETCCL_GPU_DIRECT", "0"}}), kGpuDirectOff},
      {"GpuDirectDefault", gpuDomains({}), kNone},
      {"UcxGpuStaged", ucxGpuBuffers({{"HETCCL_UCX_GPU", "0"}}), kUcxGpuStaged,
       true},
      {"UcxGpuAuto", ucxGpuBuffers({}), kNone, true},
      {"LoopbackBetweenHosts", cpuDomains(lo), kInterfaceStaysOnHost, false,
       true},
      {"LoopbackOnOneHost", cpuDomains({{"HETCCL_SOCKET_IFNAME", "lo"}}),
       kNone},
  };
}

// Like the library's rule (staysOnThisHost), by name.
bool isBridge(const std::string& name) {
  for (const char* prefix : {"docker", "br-", "virbr", "cni", "veth"})
    if (name.rfind(prefix, 0) == 0) return true;
  return false;
}

bool hasInterfaceOtherHostsReach() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return false;
  bool found = false;
  for (ifaddrs* it = list; it != nullptr; it = it->ifa_next) {
    const bool addressed =
        it->ifa_addr != nullptr && (it->ifa_addr->sa_family == AF_INET ||
                                    it->ifa_addr->sa_family == AF_INET6);
    if (addressed && (it->ifa_flags & IFF_UP) &&
        !(it->ifa_flags & IFF_LOOPBACK) && !isBridge(it->ifa_name))
      found = true;
  }
  freeifaddrs(list);
  return found;
}

// The WARN lines of `log` that hold `marker`.
std::vector<std::string> linesWith(const std::string& log,
                                   const std::string& marker) {
  std::vector<std::string> found;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);)
    if (line.find(marker) != std::string::npos) found.push_back(line);
  return found;
}

void checkWarnings(int rank, const std::string& log, Warning expected) {
  for (int kind = 0; kind < kWarningKinds; ++kind) {
    const std::vector<std::string> lines = linesWith(log, kMarkers[kind]);
    const size_t wanted = kind == expected ? 1 : 0;
    for (const std::string& line : lines)
      std::printf("rank %d: %s\n", rank, line.c_str());
    MP_CHECK(lines.size() == wanted)
        << "rank " << rank << " logged " << lines.size() << " lines with \""
        << kMarkers[kind] << "\", expected " << wanted << "; its log:\n"
        << log;
    if (kind == expected && wanted == 1)
      MP_CHECK(lines[0].find("rank " + std::to_string(rank) + ": ") !=
               std::string::npos)
          << "the warning does not name its rank: " << lines[0];
  }
}

class FallbackWarningTest : public ::testing::TestWithParam<FallbackCase> {};

TEST_P(FallbackWarningTest, WarnsOncePerRankExactlyWhereSlower) {
  const FallbackCase& param = GetParam();
  if (param.needsUcx && !ucxModuleBuilt())
    GTEST_SKIP() << "this build has no UCX module";
  if (param.needsOtherInterface && !hasInterfaceOtherHostsReach())
    GTEST_SKIP() << "no interface here besides loopback and bridges";
  char dirTemplate[] = "/tmp/hetccl-fallback-XXXXXX";
  ASSERT_NE(::mkdtemp(dirTemplate), nullptr);
  const std::string dir = dirTemplate;
  RunOptions options;
  options.timeoutSeconds = 60;
  param.layout.applyTo(&options);
  options.env["HETCCL_DEBUG"] = "WARN";
  options.env["HETCCL_DEBUG_FILE"] = dir + "/rank.%p.log";
  runRanks(
      2,
      [&](RankContext& ctx) {
        ncclComm_t comm = ctx.initComm();
        checkDomainCount(comm, param.layout.count());
        checkAllReduceSum(comm, 1, ctx.nranks(), nullptr, "after init");
        MP_CHECK_NCCL(ncclCommDestroy(comm));
        const std::string log =
            readFile(dir + "/rank." + std::to_string(::getpid()) + ".log");
        checkWarnings(ctx.rank(), log, param.expected);
      },
      options);
  (void)std::system(("rm -rf " + dir).c_str());
}

INSTANTIATE_TEST_SUITE_P(Mp, FallbackWarningTest,
                         ::testing::ValuesIn(fallbackCases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace hetccl::mp
