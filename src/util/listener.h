// A listening TCP socket that hands out connected Sockets, and that stays
// usable when the process runs out of file descriptors.
#pragma once

#include <cstddef>
#include <optional>

#include "util/deadline.h"
#include "util/owned_fd.h"
#include "util/socket.h"
#include "util/socket_address.h"

namespace hetccl {

// Move-only.
class Listener {
 public:
  // Binds `address` (port 0: the kernel picks one) with SO_REUSEADDR and
  // listens. Throws ncclSystemError naming the address.
  explicit Listener(const SocketAddress& address, int backlog = 1024);

  // The bound address, with the port the kernel chose.
  const SocketAddress& address() const { return address_; }
  int fd() const { return fd_.get(); }

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

  OwnedFd fd_;
  OwnedFd spare_;  // /dev/null, given up to accept a connection to drop
  size_t dropped_ = 0;
  SocketAddress address_;
};

}  // namespace hetccl
