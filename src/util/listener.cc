#include "util/listener.h"

#include <fcntl.h>
#include <sys/socket.h>

#include <cerrno>
#include <utility>
#include <vector>

#include "util/error.h"
#include "util/log.h"

namespace hetccl {
namespace {

OwnedFd openSpare() {
  return OwnedFd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
}

}  // namespace

Listener::Listener(const SocketAddress& address, int backlog) {
  HETCCL_CHECK_ARG(!address.empty(), "cannot listen on an empty address");
  OwnedFd fd(::socket(address.family(),
                      SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid())
    failErrno("cannot create a socket to listen on %s",
              address.toString().c_str());
  int one = 1;
  // A fixed port (HETCCL_COMM_ID) must be reusable while old connections
  // of the previous run linger in TIME_WAIT.
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(fd.get(), address.get(), address.length()) < 0)
    failErrno("cannot listen on %s: bind failed", address.toString().c_str());
  if (::listen(fd.get(), backlog) < 0)
    failErrno("cannot listen on %s", address.toString().c_str());
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  if (getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &length) < 0)
    failErrno("getsockname on the listener for %s", address.toString().c_str());
  address_ = SocketAddress(reinterpret_cast<sockaddr*>(&bound), length);
  fd_ = std::move(fd);
  spare_ = openSpare();
}

void Listener::close() {
  fd_.reset();
  spare_.reset();
}

// Out of descriptors: the spare one makes room to accept one pending
// connection, which is closed at once; false if even that failed.
bool Listener::dropOneConnection() {
  if (!spare_.valid()) return false;
  spare_.reset();
  const bool accepted =
      OwnedFd(::accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC)).valid();
  spare_ = openSpare();
  if (!accepted) return false;
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
    OwnedFd fd(::accept4(fd_.get(), reinterpret_cast<sockaddr*>(&peer), &length,
                         SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (fd.valid()) {
      SocketAddress from;
      if (peer.ss_family == AF_INET || peer.ss_family == AF_INET6)
        from = SocketAddress(reinterpret_cast<sockaddr*>(&peer), length);
      return Socket(std::move(fd), from);
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
  std::vector<pollfd> fds{{fd_.get(), POLLIN, 0}};
  while (true) {
    if (auto socket = tryAccept()) return std::move(*socket);
    if (abort.raised() || deadline.expired())
      checkWait(deadline, abort, "a connection on " + address_.toString());
    fds[0].revents = 0;
    pollSlice(fds, deadline);
  }
}

}  // namespace hetccl
