// A connected TCP socket of the bootstrap and the tcp transport, with sends
// and receives that either move what the kernel takes now or end at a
// deadline or when an abort flag is raised, so that no wait can hang.
//
// Every socket is non-blocking; the blocking calls poll in slices
// (deadline.h).
#pragma once

#include <cstddef>
#include <string>

#include "util/deadline.h"
#include "util/owned_fd.h"
#include "util/socket_address.h"

namespace hetccl {

// Owns its descriptor. Move-only.
class Socket {
 public:
  Socket() = default;
  // Takes a connected socket; makes it non-blocking and sets TCP_NODELAY.
  Socket(OwnedFd fd, const SocketAddress& peer);

  bool valid() const { return fd_.valid(); }
  int fd() const { return fd_.get(); }
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

  void close() { fd_.reset(); }

 private:
  // Throws for the errno of a failed send/recv.
  [[noreturn]] void failIo(bool sending, const char* what) const;

  OwnedFd fd_;
  SocketAddress peer_;
  std::string peerName_;
};

}  // namespace hetccl
