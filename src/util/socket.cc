#include "util/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <memory>
#include <thread>

#include "util/error.h"
#include "util/log.h"
#include "util/params.h"

namespace hetccl {
namespace {

// Closes a descriptor unless released; for the moments before a Socket or
// Listener owns it.
class UniqueFd {
 public:
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

void setNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
    failErrno("cannot make socket %d non-blocking", fd);
}

// Errors that mean "the other side is gone", as opposed to a local fault.
bool isPeerGone(int err) {
  return err == ECONNRESET || err == EPIPE || err == ENOTCONN ||
         err == ECONNABORTED || err == ETIMEDOUT || err == EHOSTUNREACH;
}

// Connect errors worth retrying: typically nothing listens there yet.
bool isRetryableConnectError(int err) {
  return err == ECONNREFUSED || err == ETIMEDOUT || err == EHOSTUNREACH ||
         err == ECONNRESET || err == ECONNABORTED;
}

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

struct IfAddrsDeleter {
  void operator()(ifaddrs* list) const { freeifaddrs(list); }
};

bool isSelfConnected(int fd) {
  sockaddr_storage local{}, remote{};
  socklen_t localLength = sizeof(local), remoteLength = sizeof(remote);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &localLength) < 0 ||
      getpeername(fd, reinterpret_cast<sockaddr*>(&remote), &remoteLength) < 0)
    return false;
  return localLength == remoteLength &&
         std::memcmp(&local, &remote, localLength) == 0;
}

// Waits for a non-blocking connect to finish; returns its errno (0: done).
int finishConnect(int fd, const SocketAddress& address,
                  const Deadline& deadline, const AbortFlags& abort,
                  const char* what) {
  std::vector<pollfd> fds{{fd, POLLOUT, 0}};
  while (true) {
    if (abort.raised() || deadline.expired())
      checkWait(
          deadline, abort,
          format("a connection to %s at %s", what, address.toString().c_str()));
    fds[0].revents = 0;
    if (pollSlice(fds, deadline) > 0) break;
  }
  int err = 0;
  socklen_t length = sizeof(err);
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &length) < 0) return errno;
  return err;
}

// Sleeps `ms` in poll slices, failing on abort or at the deadline.
void backOff(int ms, const Deadline& deadline, const AbortFlags& abort,
             const std::string& what) {
  while (ms > 0) {
    checkWait(deadline, abort, what);
    int slice = std::min(ms, deadline.pollSliceMs());
    std::this_thread::sleep_for(std::chrono::milliseconds(slice));
    ms -= slice;
  }
}

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

// ---------------------------------------------------------------------------
// SocketAddress

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
  if (family == AF_INET6) {
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_loopback;
    a.sin6_port = htons(port);
    return SocketAddress(reinterpret_cast<sockaddr*>(&a), sizeof(a));
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  return SocketAddress(reinterpret_cast<sockaddr*>(&a), sizeof(a));
}

SocketAddress SocketAddress::wildcard(int family, uint16_t port) {
  if (family == AF_INET6) {
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_any;
    a.sin6_port = htons(port);
    return SocketAddress(reinterpret_cast<sockaddr*>(&a), sizeof(a));
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  a.sin_port = htons(port);
  return SocketAddress(reinterpret_cast<sockaddr*>(&a), sizeof(a));
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

// ---------------------------------------------------------------------------
// Deadline and waiting

Deadline Deadline::after(double seconds) {
  Deadline d;
  d.seconds_ = seconds;
  // Beyond a few decades "never" is the honest reading, and it keeps the
  // time_point arithmetic far from overflow.
  if (!(seconds > 0) || !std::isfinite(seconds) || seconds > 1e9) return d;
  d.never_ = false;
  d.end_ = std::chrono::steady_clock::now() +
           std::chrono::duration_cast<std::chrono::steady_clock::duration>(
               std::chrono::duration<double>(seconds));
  return d;
}

bool Deadline::expired() const {
  return !never_ && std::chrono::steady_clock::now() >= end_;
}

int Deadline::pollSliceMs() const {
  if (never_) return kPollSliceMs;
  auto left = std::chrono::duration_cast<std::chrono::microseconds>(
                  end_ - std::chrono::steady_clock::now())
                  .count();
  if (left <= 0) return 0;
  return static_cast<int>(
      std::min<long long>(kPollSliceMs, (left + 999) / 1000));
}

Deadline Deadline::earliest(const Deadline& other) const {
  if (never_) return other;
  if (other.never_) return *this;
  return end_ <= other.end_ ? *this : other;
}

void checkWait(const Deadline& deadline, const AbortFlags& abort,
               const std::string& what) {
  if (abort.raised())
    fail(ncclSystemError, "aborted while waiting for %s", what.c_str());
  if (deadline.expired())
    fail(ncclSystemError, "timed out after %g s waiting for %s",
         deadline.seconds(), what.c_str());
}

int pollSlice(std::vector<pollfd>& fds, const Deadline& deadline) {
  int rc = ::poll(fds.data(), fds.size(), deadline.pollSliceMs());
  if (rc >= 0) return rc;
  if (errno != EINTR) failErrno("poll on %zu socket(s) failed", fds.size());
  for (auto& fd : fds) fd.revents = 0;
  return 0;
}

// ---------------------------------------------------------------------------
// Socket

Socket::Socket(int fd, const SocketAddress& peer) : fd_(fd), peer_(peer) {
  try {
    setNonBlocking(fd_);
  } catch (...) {
    close();  // the destructor does not run for a throwing constructor
    throw;
  }
  int one = 1;
  // Bootstrap messages are small and latency-bound: never let Nagle hold
  // them back.
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

Socket::~Socket() { close(); }

Socket::Socket(Socket&& other) noexcept
    : fd_(other.fd_),
      peer_(other.peer_),
      peerName_(std::move(other.peerName_)) {
  other.fd_ = -1;
}

Socket& Socket::operator=(Socket&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = other.fd_;
    peer_ = other.peer_;
    peerName_ = std::move(other.peerName_);
    other.fd_ = -1;
  }
  return *this;
}

void Socket::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string Socket::peerName() const {
  return peerName_.empty() ? peer_.toString() : peerName_;
}

void Socket::failIo(bool sending, const char* what) const {
  int err = errno;
  fail(isPeerGone(err) ? ncclRemoteError : ncclSystemError,
       "%s %s %s %s failed: %s", sending ? "sending" : "receiving", what,
       sending ? "to" : "from", peerName().c_str(), std::strerror(err));
}

size_t Socket::sendSome(const void* data, size_t bytes, const char* what) {
  while (true) {
    ssize_t n = ::send(fd_, data, bytes, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) return static_cast<size_t>(n);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
    failIo(true, what);
  }
}

size_t Socket::recvSome(void* data, size_t bytes, const char* what) {
  if (bytes == 0) return 0;
  while (true) {
    ssize_t n = ::recv(fd_, data, bytes, MSG_DONTWAIT);
    if (n > 0) return static_cast<size_t>(n);
    if (n == 0)
      fail(ncclRemoteError,
           "peer closed the connection: %s, while receiving %s",
           peerName().c_str(), what);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
    failIo(false, what);
  }
}

void Socket::sendAll(const void* data, size_t bytes, const Deadline& deadline,
                     const AbortFlags& abort, const char* what) {
  const char* p = static_cast<const char*>(data);
  size_t done = 0;
  std::vector<pollfd> fds{{fd_, POLLOUT, 0}};
  while (done < bytes) {
    size_t n = 0;
    try {
      n = sendSome(p + done, bytes - done, what);
    } catch (const Error& e) {
      fail(e.code(), "%s (%zu of %zu bytes sent)", e.what(), done, bytes);
    }
    done += n;
    if (done == bytes || n > 0) continue;
    if (abort.raised() || deadline.expired())
      checkWait(deadline, abort,
                format("%s to accept %s (%zu of %zu bytes sent)",
                       peerName().c_str(), what, done, bytes));
    fds[0].revents = 0;
    pollSlice(fds, deadline);
  }
}

void Socket::recvAll(void* data, size_t bytes, const Deadline& deadline,
                     const AbortFlags& abort, const char* what) {
  char* p = static_cast<char*>(data);
  size_t done = 0;
  std::vector<pollfd> fds{{fd_, POLLIN, 0}};
  while (done < bytes) {
    size_t n = 0;
    try {
      n = recvSome(p + done, bytes - done, what);
    } catch (const Error& e) {
      fail(e.code(), "%s (got %zu of %zu bytes)", e.what(), done, bytes);
    }
    done += n;
    if (done == bytes || n > 0) continue;
    if (abort.raised() || deadline.expired())
      checkWait(deadline, abort,
                format("%s from %s (got %zu of %zu bytes)", what,
                       peerName().c_str(), done, bytes));
    fds[0].revents = 0;
    pollSlice(fds, deadline);
  }
}

// ---------------------------------------------------------------------------
// Listener

Listener::Listener(const SocketAddress& address, int backlog) {
  HETCCL_CHECK_ARG(!address.empty(), "cannot listen on an empty address");
  int fd =
      ::socket(address.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0)
    failErrno("cannot create a socket to listen on %s",
              address.toString().c_str());
  UniqueFd guard(fd);
  int one = 1;
  // A fixed port (HETCCL_COMM_ID) must be reusable while old connections
  // of the previous run linger in TIME_WAIT.
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(fd, address.get(), address.length()) < 0)
    failErrno("cannot listen on %s: bind failed", address.toString().c_str());
  if (::listen(fd, backlog) < 0)
    failErrno("cannot listen on %s", address.toString().c_str());
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) < 0)
    failErrno("getsockname on the listener for %s", address.toString().c_str());
  address_ = SocketAddress(reinterpret_cast<sockaddr*>(&bound), length);
  fd_ = guard.release();
  spareFd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
}

Listener::~Listener() { close(); }

Listener::Listener(Listener&& other) noexcept
    : fd_(other.fd_),
      spareFd_(other.spareFd_),
      dropped_(other.dropped_),
      address_(other.address_) {
  other.fd_ = other.spareFd_ = -1;
}

Listener& Listener::operator=(Listener&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = other.fd_;
    spareFd_ = other.spareFd_;
    dropped_ = other.dropped_;
    address_ = other.address_;
    other.fd_ = other.spareFd_ = -1;
  }
  return *this;
}

void Listener::close() {
  for (int* fd : {&fd_, &spareFd_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

// Out of descriptors: the spare one makes room to accept one pending
// connection, which is closed at once; false if even that failed.
bool Listener::dropOneConnection() {
  if (spareFd_ < 0) return false;
  ::close(spareFd_);
  const int fd = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd >= 0) ::close(fd);
  spareFd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  if (++dropped_ == 1 || dropped_ % 100 == 0)
    LOG_WARN(kLogNet,
             "out of file descriptors (raise 'ulimit -n'): dropped %zu "
             "connection(s) on %s so far",
             dropped_, address_.toString().c_str());
  return true;
}

std::optional<Socket> Listener::tryAccept() {
  while (true) {
    sockaddr_storage peer{};
    socklen_t length = sizeof(peer);
    int fd = ::accept4(fd_, reinterpret_cast<sockaddr*>(&peer), &length,
                       SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      UniqueFd guard(fd);
      SocketAddress from;
      if (peer.ss_family == AF_INET || peer.ss_family == AF_INET6)
        from = SocketAddress(reinterpret_cast<sockaddr*>(&peer), length);
      return Socket(guard.release(), from);
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return std::nullopt;
    // The connection died between SYN and accept: nothing to hand out.
    if (errno == ECONNABORTED || errno == EPROTO) continue;
    if (errno == EMFILE || errno == ENFILE) {
      if (dropOneConnection()) continue;
      return std::nullopt;
    }
    failErrno("accept on %s failed", address_.toString().c_str());
  }
}

Socket Listener::accept(const Deadline& deadline, const AbortFlags& abort) {
  std::vector<pollfd> fds{{fd_, POLLIN, 0}};
  while (true) {
    if (auto socket = tryAccept()) return std::move(*socket);
    if (abort.raised() || deadline.expired())
      checkWait(deadline, abort, "a connection on " + address_.toString());
    fds[0].revents = 0;
    pollSlice(fds, deadline);
  }
}

// ---------------------------------------------------------------------------
// connectTo

Socket connectTo(const SocketAddress& address, const Deadline& deadline,
                 const AbortFlags& abort, const char* what, ConnectMode mode) {
  HETCCL_CHECK_ARG(!address.empty(), "cannot connect to %s: no address", what);
  int delayMs = 5;
  int attempts = 0;
  while (true) {
    ++attempts;
    int fd = ::socket(address.family(),
                      SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) failErrno("cannot create a socket to connect to %s", what);
    UniqueFd guard(fd);
    int err = 0;
    if (::connect(fd, address.get(), address.length()) < 0)
      err = (errno == EINPROGRESS || errno == EINTR)
                ? finishConnect(fd, address, deadline, abort, what)
                : errno;
    // Retrying a local port that nobody listens on can end in TCP's
    // simultaneous open with ourselves; that is "not up yet" too.
    if (err == 0 && isSelfConnected(fd)) err = ECONNREFUSED;
    if (err == 0) {
      LOG_TRACE(kLogNet, "connected to %s at %s after %d attempt(s)", what,
                address.toString().c_str(), attempts);
      return Socket(guard.release(), address);
    }
    if (err == ECONNREFUSED && mode == ConnectMode::kListenerIsUp)
      fail(ncclRemoteError,
           "%s at %s refused the connection: its process is gone", what,
           address.toString().c_str());
    if (!isRetryableConnectError(err)) {
      errno = err;
      failErrno("cannot connect to %s at %s", what, address.toString().c_str());
    }
    backOff(
        delayMs, deadline, abort,
        format("%s at %s to accept a connection (%d attempt(s), last "
               "error: %s)",
               what, address.toString().c_str(), attempts, std::strerror(err)));
    delayMs = std::min(delayMs * 2, kPollSliceMs);
  }
}

// ---------------------------------------------------------------------------
// Interfaces

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
