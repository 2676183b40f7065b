#include "util/net_interfaces.h"

#include <ifaddrs.h>
#include <net/if.h>
#include <sys/socket.h>

#include <algorithm>
#include <memory>

#include "util/error.h"
#include "util/log.h"
#include "util/params.h"

namespace hetccl {
namespace {

struct IfAddrsDeleter {
  void operator()(ifaddrs* list) const { freeifaddrs(list); }
};

int familyFromEnv() {
  std::string family = readChoice(kSocketFamily);
  if (family == "AF_INET" || family == "4" || family == "ipv4") return AF_INET;
  if (family == "AF_INET6" || family == "6" || family == "ipv6")
    return AF_INET6;
  return AF_UNSPEC;
}

// Lower is better: IPv4, then global IPv6, then link-local addresses that
// need a scope to be reachable.
int preference(const NetInterface& interface) {
  if (interface.address.isLinkLocal()) return 2;
  return interface.address.family() == AF_INET ? 0 : 1;
}

std::string describeInterfaces(const std::vector<NetInterface>& list) {
  std::string out;
  for (const auto& interface : list) {
    if (!out.empty()) out += ", ";
    out += interface.name + "(" + interface.address.hostString() + ")";
  }
  return out.empty() ? "none" : out;
}

bool isVirtualByDefault(const std::string& name) {
  return name.rfind("docker", 0) == 0 || name.rfind("virbr", 0) == 0 ||
         name.rfind("lo", 0) == 0;
}

}  // namespace

std::vector<NetInterface> listInterfaces() {
  ifaddrs* raw = nullptr;
  if (getifaddrs(&raw) < 0) failErrno("getifaddrs failed");
  std::unique_ptr<ifaddrs, IfAddrsDeleter> list(raw);
  std::vector<NetInterface> out;
  for (const ifaddrs* it = list.get(); it != nullptr; it = it->ifa_next) {
    if (it->ifa_addr == nullptr || (it->ifa_flags & IFF_UP) == 0) continue;
    int family = it->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    socklen_t length =
        family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    NetInterface interface;
    interface.name = it->ifa_name;
    interface.address = SocketAddress(it->ifa_addr, length).withPort(0);
    interface.loopback = (it->ifa_flags & IFF_LOOPBACK) != 0;
    out.push_back(std::move(interface));
  }
  return out;
}

bool interfaceMatches(const std::string& name, const std::string& spec) {
  size_t pos = 0;
  bool exclude = pos < spec.size() && spec[pos] == '^';
  if (exclude) ++pos;
  bool exact = pos < spec.size() && spec[pos] == '=';
  if (exact) ++pos;
  bool matched = false;
  while (pos <= spec.size() && !matched) {
    size_t comma = spec.find(',', pos);
    if (comma == std::string::npos) comma = spec.size();
    std::string token = spec.substr(pos, comma - pos);
    if (!token.empty())
      matched =
          exact ? name == token : name.compare(0, token.size(), token) == 0;
    pos = comma + 1;
  }
  return exclude ? !matched : matched;
}

std::optional<std::string> interfaceFilter() {
  return readString(kSocketIfname);
}

std::vector<NetInterface> selectInterfaces() {
  std::vector<NetInterface> all = listInterfaces();
  int family = familyFromEnv();
  auto spec = interfaceFilter();
  std::vector<NetInterface> chosen;
  for (const auto& interface : all) {
    if (family != AF_UNSPEC && interface.address.family() != family) continue;
    bool keep =
        spec ? interfaceMatches(interface.name, *spec)
             : !interface.loopback && !isVirtualByDefault(interface.name);
    if (keep) chosen.push_back(interface);
  }
  if (spec && chosen.empty())
    fail(ncclSystemError,
         "no network interface matches HETCCL_SOCKET_IFNAME/"
         "NCCL_SOCKET_IFNAME=\"%s\"%s; interfaces that are up: %s",
         spec->c_str(),
         family == AF_INET ? " with AF_INET"
                           : (family == AF_INET6 ? " with AF_INET6" : ""),
         describeInterfaces(all).c_str());
  std::stable_sort(chosen.begin(), chosen.end(),
                   [](const NetInterface& a, const NetInterface& b) {
                     return preference(a) < preference(b);
                   });
  return chosen;
}

bool staysOnThisHost(const NetInterface& interface) {
  if (interface.loopback) return true;
  for (const char* prefix : {"docker", "br-", "virbr", "cni", "veth"})
    if (interface.name.rfind(prefix, 0) == 0) return true;
  return false;
}

// One address per interface is enough to tell them apart.
std::string unreachableChoiceNote(const NetInterface& chosen,
                                  const std::vector<NetInterface>& all) {
  if (!staysOnThisHost(chosen)) return "";
  std::vector<NetInterface> others;
  for (const NetInterface& interface : all)
    if (!staysOnThisHost(interface) &&
        std::none_of(others.begin(), others.end(),
                     [&](const NetInterface& other) {
                       return other.name == interface.name;
                     }))
      others.push_back(interface);
  if (others.empty()) return "";
  return format(
      "sockets use %s (%s), which other hosts cannot reach, though %s %s "
      "up; set HETCCL_SOCKET_IFNAME to one of those",
      chosen.name.c_str(), chosen.address.hostString().c_str(),
      describeInterfaces(others).c_str(), others.size() == 1 ? "is" : "are");
}

std::string unreachableInterfaceNote() {
  std::vector<NetInterface> selected = selectInterfaces();
  if (!selected.empty())
    return unreachableChoiceNote(selected[0], listInterfaces());
  const int family = familyFromEnv() == AF_INET6 ? AF_INET6 : AF_INET;
  return unreachableChoiceNote({"lo", SocketAddress::loopback(family), true},
                               listInterfaces());
}

SocketAddress chooseLocalAddress() {
  std::vector<NetInterface> interfaces = selectInterfaces();
  if (!interfaces.empty()) {
    LOG_TRACE(kLogNet, "using interface %s, address %s",
              interfaces[0].name.c_str(),
              interfaces[0].address.hostString().c_str());
    return interfaces[0].address.withPort(0);
  }
  int family = familyFromEnv() == AF_INET6 ? AF_INET6 : AF_INET;
  LOG_TRACE(kLogNet, "no usable network interface; using loopback");
  return SocketAddress::loopback(family);
}

}  // namespace hetccl
