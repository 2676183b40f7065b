// An IPv4 or IPv6 address and port: parsed from text, printed for
// messages, and encoded in a fixed-size form for ids and hellos.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace hetccl {

// Empty (AF_UNSPEC) when default-constructed.
class SocketAddress {
 public:
  // Size of encode()'s output: family, port, IPv6 scope id, 16 address bytes.
  static constexpr size_t kEncodedBytes = 24;

  SocketAddress() = default;
  // Copies an AF_INET or AF_INET6 sockaddr; throws ncclInvalidArgument for
  // any other family.
  SocketAddress(const sockaddr* address, socklen_t length);

  // Parses "1.2.3.4:5678", "host.name:5678", "[::1]:5678",
  // "[fe80::1%eth0]:5678" or an unbracketed IPv6 address whose last colon
  // starts the port. Host names are resolved with getaddrinfo; with
  // AF_UNSPEC an IPv4 result is preferred. Throws ncclInvalidArgument.
  static SocketAddress parse(const std::string& text, int family = AF_UNSPEC);
  static SocketAddress loopback(int family, uint16_t port = 0);
  static SocketAddress wildcard(int family, uint16_t port = 0);

  bool empty() const { return length_ == 0; }
  int family() const;
  uint16_t port() const;
  SocketAddress withPort(uint16_t port) const;
  bool isLoopback() const;
  bool isLinkLocal() const;  // IPv6 fe80::/10 or IPv4 169.254/16

  // "1.2.3.4" or "fe80::1%eth0".
  std::string hostString() const;
  // "1.2.3.4:5678" or "[::1]:5678"; "<no address>" when empty.
  std::string toString() const;

  const sockaddr* get() const {
    return reinterpret_cast<const sockaddr*>(&storage_);
  }
  socklen_t length() const { return length_; }

  // Fixed-size, byte-order independent form for ids and hello messages.
  void encode(uint8_t* out) const;
  // An empty address encodes as family 0 and decodes back to empty.
  // Throws ncclInvalidArgument if `in` does not hold an encoded address.
  static SocketAddress decode(const uint8_t* in);

  bool operator==(const SocketAddress& other) const;
  bool operator!=(const SocketAddress& other) const {
    return !(*this == other);
  }

 private:
  sockaddr_storage storage_{};
  socklen_t length_ = 0;
};

}  // namespace hetccl
