// The network interfaces HetCCL may use, chosen as NCCL chooses them:
// HETCCL_SOCKET_IFNAME / NCCL_SOCKET_IFNAME by name, HETCCL_SOCKET_FAMILY /
// NCCL_SOCKET_FAMILY by address family.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "util/socket_address.h"

namespace hetccl {

// One address of a network interface that is up.
struct NetInterface {
  std::string name;
  SocketAddress address;
  bool loopback = false;
};

// Every address of every interface that is up, in the kernel's order.
std::vector<NetInterface> listInterfaces();

// True if interface `name` passes an NCCL_SOCKET_IFNAME-style `spec`:
// comma-separated name prefixes; a leading '^' excludes instead of
// selects; a leading '=' (after any '^') compares exact names.
bool interfaceMatches(const std::string& name, const std::string& spec);

// HETCCL_SOCKET_IFNAME (else NCCL_SOCKET_IFNAME) as set: the filter of
// selectInterfaces(); nullopt when neither is set.
std::optional<std::string> interfaceFilter();

// The interfaces HetCCL may use, best first. HETCCL_SOCKET_IFNAME (else
// NCCL_SOCKET_IFNAME) filters by name; without it, loopback, docker* and
// virbr* are skipped unless nothing else is up. HETCCL_SOCKET_FAMILY (else
// NCCL_SOCKET_FAMILY) = AF_INET or AF_INET6 restricts the family; without
// it IPv4 comes first, and link-local IPv6 last. Throws ncclSystemError if
// an explicit filter matches nothing.
std::vector<NetInterface> selectInterfaces();

// Whether other hosts cannot reach this host through `interface`:
// loopback, or a bridge to this host's containers or VMs (docker*, br-*,
// virbr*, cni*, veth*).
bool staysOnThisHost(const NetInterface& interface);

// When `chosen` (HetCCL's choice) stays on this host while interfaces of
// `all` that do not are up: "sockets use lo (127.0.0.1), which other
// hosts cannot reach, though eth0(192.0.2.2) is up; set
// HETCCL_SOCKET_IFNAME to one of those"; else empty.
std::string unreachableChoiceNote(const NetInterface& chosen,
                                  const std::vector<NetInterface>& all);

// The same for this machine and the interface chooseLocalAddress() takes.
std::string unreachableInterfaceNote();

// The address (port 0) to listen on and advertise to other ranks: the
// first of selectInterfaces(), else loopback.
SocketAddress chooseLocalAddress();

}  // namespace hetccl
