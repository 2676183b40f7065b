// TCP sockets for the bootstrap and the tcp transport: addresses, RAII
// sockets and listeners, connect with retries, and sends/receives that end
// at a deadline or when an abort flag is raised, so that no wait can hang.
//
// Every socket is non-blocking; blocking calls poll in slices of at most
// kPollSliceMs so that they notice an abort promptly.
#pragma once

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hetccl {

// Longest single sleep of any blocking socket call, in milliseconds.
constexpr int kPollSliceMs = 100;

// An IPv4 or IPv6 address and port. Empty (AF_UNSPEC) when
// default-constructed.
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

// A point in time after which a wait fails. "Never" waits until aborted.
class Deadline {
 public:
  // `seconds` from now; zero, negative or infinite means never.
  static Deadline after(double seconds);
  static Deadline never() { return Deadline(); }

  bool isNever() const { return never_; }
  bool expired() const;
  // The length this deadline was made with, for messages.
  double seconds() const { return seconds_; }
  // How long one poll may sleep: at most kPollSliceMs, never past the
  // deadline.
  int pollSliceMs() const;
  // Whichever of the two ends first.
  Deadline earliest(const Deadline& other) const;

 private:
  Deadline() = default;
  std::chrono::steady_clock::time_point end_{};
  double seconds_ = 0;
  bool never_ = true;
};

// The flags that can cut a wait short: the caller's abort flag and,
// optionally, the owning object's own. Either may be null. Converts
// implicitly from a single flag pointer.
class AbortFlags {
 public:
  AbortFlags(const std::atomic<bool>* flag = nullptr)  // NOLINT: implicit
      : first_(flag) {}
  AbortFlags(const std::atomic<bool>* first, const std::atomic<bool>* second)
      : first_(first), second_(second) {}
  bool raised() const {
    return (first_ && first_->load(std::memory_order_acquire)) ||
           (second_ && second_->load(std::memory_order_acquire));
  }

 private:
  const std::atomic<bool>* first_ = nullptr;
  const std::atomic<bool>* second_ = nullptr;
};

// Throws ncclSystemError "aborted while waiting for <what>" when an abort
// flag is raised, or "timed out after X s waiting for <what>" when the
// deadline passed. Call it before every sleep of a wait loop.
void checkWait(const Deadline& deadline, const AbortFlags& abort,
               const std::string& what);

// poll() for at most one slice of `deadline`, retrying on EINTR. Returns
// poll's count (0 when the slice ended). Throws ncclSystemError on failure.
int pollSlice(std::vector<pollfd>& fds, const Deadline& deadline);

// A connected TCP socket; owns its descriptor. Move-only.
class Socket {
 public:
  Socket() = default;
  // Takes ownership of a connected socket `fd`; makes it non-blocking and
  // sets TCP_NODELAY.
  Socket(int fd, const SocketAddress& peer);
  ~Socket();
  Socket(Socket&& other) noexcept;
  Socket& operator=(Socket&& other) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  bool valid() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  const SocketAddress& peerAddress() const { return peer_; }
  // How messages name the other end: the name given with setPeerName
  // ("rank 3 at 1.2.3.4:5678"), else the address.
  std::string peerName() const;
  void setPeerName(std::string name) { peerName_ = std::move(name); }

  // Sends/receives exactly `bytes`. Throw ncclSystemError on timeout or
  // abort, ncclRemoteError when the peer closed or reset the connection.
  // `what` names the data in messages ("hello", "peer table").
  void sendAll(const void* data, size_t bytes, const Deadline& deadline,
               const AbortFlags& abort, const char* what = "data");
  void recvAll(void* data, size_t bytes, const Deadline& deadline,
               const AbortFlags& abort, const char* what = "data");

  // Non-blocking: moves what the kernel takes/has now; 0 if it would block.
  // recvSome throws ncclRemoteError "peer closed the connection" at EOF.
  size_t sendSome(const void* data, size_t bytes, const char* what);
  size_t recvSome(void* data, size_t bytes, const char* what);

  void close();

 private:
  // Throws for the errno of a failed send/recv.
  [[noreturn]] void failIo(bool sending, const char* what) const;

  int fd_ = -1;
  SocketAddress peer_;
  std::string peerName_;
};

// A listening TCP socket. Move-only.
class Listener {
 public:
  // Binds `address` (port 0: the kernel picks one) with SO_REUSEADDR and
  // listens. Throws ncclSystemError naming the address.
  explicit Listener(const SocketAddress& address, int backlog = 1024);
  ~Listener();
  Listener(Listener&& other) noexcept;
  Listener& operator=(Listener&& other) noexcept;
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  // The bound address, with the port the kernel chose.
  const SocketAddress& address() const { return address_; }
  int fd() const { return fd_; }

  // Waits for one connection; throws on timeout or abort.
  Socket accept(const Deadline& deadline, const AbortFlags& abort);
  // Accepts one connection that is already pending, if any. When the
  // process is out of file descriptors, pending connections are accepted
  // with a spare descriptor and closed at once (the listener stays
  // usable, and a warning says so) instead of failing.
  std::optional<Socket> tryAccept();

  void close();

 private:
  bool dropOneConnection();

  int fd_ = -1;
  int spareFd_ = -1;  // /dev/null, given up to accept a connection to drop
  size_t dropped_ = 0;
  SocketAddress address_;
};

// Whether a refused connection means "not up yet" or "gone".
enum class ConnectMode {
  kWaitForListener,  // retry refusals until the deadline
  kListenerIsUp,     // the listener is known to exist: a refusal means its
                     // process is gone (ncclRemoteError, at once)
};

// Connects to `address`; by default retries while nothing listens there
// yet (connection refused) until the deadline. `what` names the other end
// in messages ("the bootstrap root").
Socket connectTo(const SocketAddress& address, const Deadline& deadline,
                 const AbortFlags& abort, const char* what = "peer",
                 ConnectMode mode = ConnectMode::kWaitForListener);

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

// The address (port 0) to listen on and advertise to other ranks: the
// first of selectInterfaces(), else loopback.
SocketAddress chooseLocalAddress();

}  // namespace hetccl
