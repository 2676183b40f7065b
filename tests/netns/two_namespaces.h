// Ranks on two hosts whose network stacks really are separate:
// run_on_two_namespaces.sh makes two network namespaces joined by a veth
// and names them in HETCCL_NETNS_HOSTS; the tests of this folder move each
// rank into its host's, so that each host is a domain (shm inside, tcp
// across).
#pragma once

#include <optional>

#include "harness/run_ranks.h"

namespace hetccl::mp {

constexpr int kNamespaceHosts = 2;

// Why a test skips when HETCCL_NETNS_HOSTS does not name two hosts.
extern const char* const kNeedsTwoNamespaces;

// Options under which rank r enters host r / ranksPerHost's namespace
// (before any socket) and uses only its veth (HETCCL_SOCKET_IFNAME), so
// that bootstrap and links must cross it; none when HETCCL_NETNS_HOSTS
// does not name two hosts.
std::optional<RunOptions> ranksOnTwoNamespaces(int ranksPerHost);

}  // namespace hetccl::mp
