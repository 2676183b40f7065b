#include "two_namespaces.h"

#include <fcntl.h>
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

namespace hetccl::mp {
namespace {

// One namespace as run_on_two_namespaces.sh names it: "PATH:VETH", PATH
// the file that `ip netns add` made.
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

}  // namespace

const char* const kNeedsTwoNamespaces =
    "needs two network namespaces in HETCCL_NETNS_HOSTS: run it through "
    "tests/netns/run_on_two_namespaces.sh (as root)";

std::optional<RunOptions> ranksOnTwoNamespaces(int ranksPerHost) {
  const std::vector<Host> hosts = hostsFromEnvironment();
  if (hosts.size() != kNamespaceHosts) return std::nullopt;
  RunOptions options;
  options.enterRank = [hosts, ranksPerHost](int rank) {
    enterNamespace(hosts[rank / ranksPerHost]);
  };
  options.rankEnv = [hosts, ranksPerHost](int rank) {
    return std::map<std::string, std::string>{
        {"HETCCL_SOCKET_IFNAME", "=" + hosts[rank / ranksPerHost].veth}};
  };
  return options;
}

}  // namespace hetccl::mp
