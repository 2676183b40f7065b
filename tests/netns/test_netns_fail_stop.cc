// The fail-stop check (tests/mp/harness/fail_stop.h) on two hosts whose
// network stacks really are separate: run_fail_stop.sh makes two network
// namespaces joined by a veth and names them in HETCCL_NETNS_HOSTS; ranks
// 0 and 1 enter the first, ranks 2 and 3 the second, so each pair is a
// host and a domain (shm inside, tcp across). Rank 2 leaves: rank 3 can
// learn it on its own host, ranks 0 and 1 only over the network.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "harness/check.h"
#include "harness/domains.h"
#include "harness/fail_stop.h"

namespace hetccl::mp {
namespace {

constexpr int kRanksPerHost = 2;
constexpr int kHosts = 2;
constexpr int kLeaving = 2;

// One namespace as run_fail_stop.sh names it: "PATH:VETH", PATH the file
// that `ip netns add` made.
struct Host {
  std::string namespacePath;
  std::string veth;
};

// The hosts of HETCCL_NETNS_HOSTS ("PATH:VETH PATH:VETH"); empty when it
// is not set or malformed.
std::vector<Host> hostsFromEnvironment() {
  const char* text = std::getenv("HETCCL_NETNS_HOSTS");
  std::vector<Host> hosts;
  std::istringstream words(text ? text : "");
  std::string word;
  while (words >> word) {
    const size_t colon = word.rfind(':');
    if (colon == std::string::npos) return {};
    hosts.push_back({word.substr(0, colon), word.substr(colon + 1)});
  }
  return hosts;
}

// In a rank's child, before any socket: the rank's host is its namespace.
void enterNamespace(const Host& host) {
  const int fd = ::open(host.namespacePath.c_str(), O_RDONLY | O_CLOEXEC);
  MP_CHECK(fd >= 0) << "open " << host.namespacePath << ": "
                    << std::strerror(errno);
  MP_CHECK(::setns(fd, CLONE_NEWNET) == 0)
      << "setns " << host.namespacePath << ": " << std::strerror(errno);
  ::close(fd);
}

class NetnsFailStopTest : public ::testing::TestWithParam<FailStopCase> {};

TEST_P(NetnsFailStopTest, SurvivorsNeverSucceedWithAWrongResult) {
  const std::vector<Host> hosts = hostsFromEnvironment();
  if (hosts.size() != kHosts)
    GTEST_SKIP() << "needs two network namespaces in HETCCL_NETNS_HOSTS: "
                    "run it through tests/netns/run_fail_stop.sh (as root)";
  RunOptions options;
  options.enterRank = [&](int rank) {
    enterNamespace(hosts[rank / kRanksPerHost]);
  };
  // Each rank's only interface besides lo: bootstrap and links must cross
  // the veth.
  options.rankEnv = [&](int rank) {
    return std::map<std::string, std::string>{
        {"HETCCL_SOCKET_IFNAME", "=" + hosts[rank / kRanksPerHost].veth}};
  };
  runFailStopCase(GetParam(), options);
}

std::string caseName(const ::testing::TestParamInfo<FailStopCase>& info) {
  return info.param.name();
}

// CPU ranks and emulated GPU ranks in one matrix, so that the operations
// take turns across both kinds.
std::vector<FailStopCase> cases() {
  return failStopMatrix({{"cpuHosts", domainPerHost(kHosts, false)},
                         {"gpuHosts", domainPerHost(kHosts, true)}},
                        kHosts * kRanksPerHost, kLeaving);
}

INSTANTIATE_TEST_SUITE_P(Netns, NetnsFailStopTest, ::testing::ValuesIn(cases()),
                         caseName);

}  // namespace
}  // namespace hetccl::mp
