// The one acceptor of connections that must prove a secret before they
// count: the bootstrap root's, each rank's bootstrap listener, and the tcp
// transport's. Anyone who can reach a port can connect, so it bounds what
// a stranger costs: at most kMaxPendingConnections connections wait for
// their hello at once (beyond that the oldest goes, since a rank says
// hello at once), a connection whose hello is not complete within
// kHelloTimeoutSeconds goes, a hello without the secret is refused before
// the caller reads anything else of it, and the warnings about dropped
// connections are throttled (LogThrottle), so that a flood of strangers
// floods neither the descriptors nor the log.
//
// The caller says what its hello looks like (HelloFormat) and what to make
// of one (OnHello), and drives the acceptor from its own poll loop:
// appendPollFds before the poll, progress after it. Not thread-safe: the
// owner serialises its calls.
#pragma once

#include <poll.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <string>
#include <utility>
#include <vector>

#include "util/deadline.h"
#include "util/error.h"
#include "util/listener.h"
#include "util/log.h"
#include "util/secret.h"
#include "util/socket.h"

namespace hetccl {

// How long a fresh connection may take to send its hello before it is
// dropped as a stranger.
constexpr double kHelloTimeoutSeconds = 5.0;
// How many connections may wait for their hello at once.
constexpr size_t kMaxPendingConnections = 256;

// What the acceptor itself checks of a caller's hello.
struct HelloFormat {
  // Names the hello in messages: "a HetCCL peer hello".
  std::string what;
  // The first bytes, checked as soon as they are in: a stranger that
  // speaks another protocol goes at once, not at the deadline.
  size_t magicBytes = 0;
  bool (*hasMagic)(const uint8_t* bytes) = nullptr;
  // What is read before the secret is checked and the caller first looks:
  // a part that keeps its layout in every version of the protocol and
  // holds the secret at secretOffset, so that a stranger is told from a
  // rank of another build.
  size_t fixedBytes = 0;
  size_t secretOffset = 0;
  // Why a hello with another secret is refused.
  std::string wrongSecret;
};

// What the caller makes of a hello so far.
class HelloVerdict {
 public:
  // Not complete yet: read on until the hello holds `bytes` in all (more
  // than it holds now).
  static HelloVerdict readUntil(size_t bytes) {
    return HelloVerdict(Kind::kReadUntil, bytes, Error(ncclSuccess, ""));
  }
  // Not wanted: answered (if the caller answers refusals), logged, closed.
  static HelloVerdict refuse(ncclResult_t code, const std::string& reason) {
    return HelloVerdict(Kind::kRefuse, 0, Error(code, reason));
  }
  // The caller moved the socket out: the connection is its own now.
  static HelloVerdict taken() {
    return HelloVerdict(Kind::kTaken, 0, Error(ncclSuccess, ""));
  }

 private:
  friend class AuthenticatedAcceptor;
  enum class Kind { kReadUntil, kRefuse, kTaken };
  HelloVerdict(Kind kind, size_t bytes, Error refusal)
      : kind_(kind), bytes_(bytes), refusal_(std::move(refusal)) {}

  Kind kind_;
  size_t bytes_;
  Error refusal_;
};

class AuthenticatedAcceptor {
 public:
  // Called with the hello so far (the fixed part, with the right magic and
  // secret, or as many bytes as the last verdict asked for) and its
  // connection. May throw: that drops only this connection.
  using OnHello = std::function<HelloVerdict(const std::vector<uint8_t>& hello,
                                             Socket& socket)>;
  // Tells a refused connection why, before it is closed (the root's ranks
  // wait for an answer); optional.
  using Answer = std::function<void(Socket& socket, const Error& refusal)>;

  // `name` says who listens in the log ("rank 3"), `logSubsys` where.
  AuthenticatedAcceptor(Listener listener, const Secret& secret,
                        HelloFormat format, std::string name,
                        uint32_t logSubsys, OnHello onHello,
                        Answer answer = nullptr);

  // Connections whose hello is not complete.
  size_t pendingCount() const { return pending_.size(); }

  // Appends the descriptors to poll for POLLIN: the listener and every
  // pending connection.
  void appendPollFds(std::vector<pollfd>* fds) const;
  // After a poll of descriptors that include appendPollFds': reads the
  // hellos that moved, accepts, and drops connections past their
  // deadline. Entries are matched by descriptor, so the caller may add
  // its own, and a poll set built before an earlier progress call (the
  // bootstrap's mesh polls outside its lock) does no harm: a stale entry
  // costs one read that finds nothing.
  void progress(const std::vector<pollfd>& polled);

  // Stops listening and closes the pending connections, without logging.
  void close();

 private:
  struct Pending {
    Socket socket;
    std::vector<uint8_t> hello;  // what arrived of it
    size_t wanted = 0;           // read until the hello holds this much
    Deadline deadline = Deadline::never();
  };

  void acceptWaiting();
  // Reads what arrived and acts on it; false once the connection is
  // gone (taken, refused or dropped).
  bool advance(Pending& pending);
  bool lookAt(Pending& pending);
  bool hasSecret(const std::vector<uint8_t>& hello) const;
  void refuse(Pending& pending, const Error& refusal);
  void drop(Pending& pending, const std::string& reason);
  void dropExpired();

  Listener listener_;
  const Secret secret_;
  const HelloFormat format_;
  const std::string name_;
  const uint32_t logSubsys_;
  const OnHello onHello_;
  const Answer answer_;
  std::list<Pending> pending_;  // in the order accepted
  LogThrottle drops_;
};

}  // namespace hetccl
