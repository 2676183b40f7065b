#include "util/socket_address.h"

#include <arpa/inet.h>
#include <netdb.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "util/error.h"

namespace hetccl {
namespace {

std::string portString(const std::string& text, const std::string& port) {
  bool digits = !port.empty() && port.size() <= 5 &&
                std::all_of(port.begin(), port.end(),
                            [](char c) { return c >= '0' && c <= '9'; });
  if (!digits || std::stoi(port) > 65535)
    fail(ncclInvalidArgument, "bad port \"%s\" in address \"%s\"", port.c_str(),
         text.c_str());
  return port;
}

// Splits "host:port", "[v6]:port" and "v6:with:colons:port".
void splitHostPort(const std::string& text, std::string* host,
                   std::string* port) {
  if (!text.empty() && text[0] == '[') {
    size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() ||
        text[close + 1] != ':')
      fail(ncclInvalidArgument, "bad address \"%s\": expected \"[IPv6]:port\"",
           text.c_str());
    *host = text.substr(1, close - 1);
    *port = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string::npos)
      fail(ncclInvalidArgument, "bad address \"%s\": expected \"host:port\"",
           text.c_str());
    *host = text.substr(0, colon);
    *port = text.substr(colon + 1);
  }
  if (host->empty())
    fail(ncclInvalidArgument, "bad address \"%s\": no host", text.c_str());
}

struct AddrInfoDeleter {
  void operator()(addrinfo* info) const { freeaddrinfo(info); }
};

// An IPv6 address for AF_INET6, else an IPv4 one (host byte order).
SocketAddress hostAddress(int family, uint16_t port, const in6_addr& v6,
                          uint32_t v4) {
  if (family == AF_INET6) {
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_addr = v6;
    a.sin6_port = htons(port);
    return SocketAddress(reinterpret_cast<sockaddr*>(&a), sizeof(a));
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(v4);
  a.sin_port = htons(port);
  return SocketAddress(reinterpret_cast<sockaddr*>(&a), sizeof(a));
}

}  // namespace

SocketAddress::SocketAddress(const sockaddr* address, socklen_t length) {
  size_t expected = 0;
  if (address->sa_family == AF_INET) expected = sizeof(sockaddr_in);
  if (address->sa_family == AF_INET6) expected = sizeof(sockaddr_in6);
  if (expected == 0 || length < expected)
    fail(ncclInvalidArgument, "unsupported socket address family %d",
         address->sa_family);
  std::memcpy(&storage_, address, expected);
  length_ = static_cast<socklen_t>(expected);
}

SocketAddress SocketAddress::parse(const std::string& text, int family) {
  std::string host, port;
  splitHostPort(text, &host, &port);
  port = portString(text, port);
  addrinfo hints{};
  hints.ai_family = family;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* raw = nullptr;
  int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &raw);
  if (rc != 0)
    fail(ncclInvalidArgument, "cannot resolve \"%s\": %s", text.c_str(),
         gai_strerror(rc));
  std::unique_ptr<addrinfo, AddrInfoDeleter> list(raw);
  const addrinfo* chosen = nullptr;
  for (const addrinfo* it = list.get(); it != nullptr; it = it->ai_next) {
    if (it->ai_family != AF_INET && it->ai_family != AF_INET6) continue;
    if (chosen == nullptr) chosen = it;
    if (it->ai_family == AF_INET) {
      chosen = it;
      break;
    }
  }
  if (chosen == nullptr)
    fail(ncclInvalidArgument, "\"%s\" has no IPv4 or IPv6 address",
         text.c_str());
  return SocketAddress(chosen->ai_addr, chosen->ai_addrlen);
}

SocketAddress SocketAddress::loopback(int family, uint16_t port) {
  return hostAddress(family, port, in6addr_loopback, INADDR_LOOPBACK);
}

SocketAddress SocketAddress::wildcard(int family, uint16_t port) {
  return hostAddress(family, port, in6addr_any, INADDR_ANY);
}

int SocketAddress::family() const {
  return empty() ? AF_UNSPEC : storage_.ss_family;
}

uint16_t SocketAddress::port() const {
  if (family() == AF_INET)
    return ntohs(reinterpret_cast<const sockaddr_in*>(&storage_)->sin_port);
  if (family() == AF_INET6)
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_port);
  return 0;
}

SocketAddress SocketAddress::withPort(uint16_t port) const {
  SocketAddress copy = *this;
  if (family() == AF_INET)
    reinterpret_cast<sockaddr_in*>(&copy.storage_)->sin_port = htons(port);
  if (family() == AF_INET6)
    reinterpret_cast<sockaddr_in6*>(&copy.storage_)->sin6_port = htons(port);
  return copy;
}

bool SocketAddress::isLoopback() const {
  if (family() == AF_INET) {
    uint32_t a =
        ntohl(reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr.s_addr);
    return (a >> 24) == 127;
  }
  if (family() == AF_INET6) {
    const in6_addr& a =
        reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_addr;
    return IN6_IS_ADDR_LOOPBACK(&a) ||
           (IN6_IS_ADDR_V4MAPPED(&a) && a.s6_addr[12] == 127);
  }
  return false;
}

bool SocketAddress::isLinkLocal() const {
  if (family() == AF_INET) {
    uint32_t a =
        ntohl(reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr.s_addr);
    return (a >> 16) == 0xA9FE;  // 169.254.0.0/16
  }
  if (family() == AF_INET6) {
    const in6_addr& a =
        reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_addr;
    return IN6_IS_ADDR_LINKLOCAL(&a);
  }
  return false;
}

std::string SocketAddress::hostString() const {
  if (empty()) return "<no address>";
  char host[NI_MAXHOST] = {0};
  if (getnameinfo(get(), length_, host, sizeof(host), nullptr, 0,
                  NI_NUMERICHOST) != 0)
    return "<unprintable address>";
  return host;
}

std::string SocketAddress::toString() const {
  if (empty()) return "<no address>";
  std::string host = hostString();
  std::string port = std::to_string(this->port());
  if (family() == AF_INET6) return "[" + host + "]:" + port;
  return host + ":" + port;
}

void SocketAddress::encode(uint8_t* out) const {
  std::memset(out, 0, kEncodedBytes);
  uint16_t port = this->port();
  out[2] = static_cast<uint8_t>(port >> 8);
  out[3] = static_cast<uint8_t>(port);
  if (family() == AF_INET) {
    out[0] = 4;
    std::memcpy(out + 8,
                &reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr, 4);
  } else if (family() == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&storage_);
    out[0] = 6;
    uint32_t scope = a->sin6_scope_id;
    for (int i = 0; i < 4; ++i)
      out[4 + i] = static_cast<uint8_t>(scope >> (8 * i));
    std::memcpy(out + 8, &a->sin6_addr, 16);
  }
}

SocketAddress SocketAddress::decode(const uint8_t* in) {
  uint16_t port = static_cast<uint16_t>((in[2] << 8) | in[3]);
  if (in[0] == 0 && in[1] == 0) return SocketAddress();
  if (in[0] == 4 && in[1] == 0) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    std::memcpy(&a.sin_addr, in + 8, 4);
    return SocketAddress(reinterpret_cast<sockaddr*>(&a), sizeof(a));
  }
  if (in[0] == 6 && in[1] == 0) {
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_port = htons(port);
    uint32_t scope = 0;
    for (int i = 0; i < 4; ++i)
      scope |= static_cast<uint32_t>(in[4 + i]) << (8 * i);
    a.sin6_scope_id = scope;
    std::memcpy(&a.sin6_addr, in + 8, 16);
    return SocketAddress(reinterpret_cast<sockaddr*>(&a), sizeof(a));
  }
  fail(ncclInvalidArgument, "encoded socket address has unknown family %u",
       in[0]);
}

bool SocketAddress::operator==(const SocketAddress& other) const {
  uint8_t a[kEncodedBytes], b[kEncodedBytes];
  encode(a);
  other.encode(b);
  return std::memcmp(a, b, kEncodedBytes) == 0;
}

}  // namespace hetccl
