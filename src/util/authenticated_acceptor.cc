#include "util/authenticated_acceptor.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace hetccl {

AuthenticatedAcceptor::AuthenticatedAcceptor(
    Listener listener, const Secret& secret, HelloFormat format,
    std::string name, uint32_t logSubsys, OnHello onHello, Answer answer)
    : listener_(std::move(listener)),
      secret_(secret),
      format_(std::move(format)),
      name_(std::move(name)),
      logSubsys_(logSubsys),
      onHello_(std::move(onHello)),
      answer_(std::move(answer)) {}

void AuthenticatedAcceptor::appendPollFds(std::vector<pollfd>* fds) const {
  fds->push_back({listener_.fd(), POLLIN, 0});
  for (const Pending& pending : pending_)
    fds->push_back({pending.socket.fd(), POLLIN, 0});
}

void AuthenticatedAcceptor::progress(const std::vector<pollfd>& polled) {
  bool listenerReady = false;
  for (const pollfd& entry : polled) {
    if (entry.revents == 0) continue;
    if (entry.fd == listener_.fd()) {
      listenerReady = true;
      continue;
    }
    auto it = std::find_if(pending_.begin(), pending_.end(),
                           [&](const Pending& pending) {
                             return pending.socket.fd() == entry.fd;
                           });
    if (it != pending_.end() && !advance(*it)) pending_.erase(it);
  }
  dropExpired();
  if (listenerReady) acceptWaiting();
}

void AuthenticatedAcceptor::close() {
  listener_.close();
  pending_.clear();
}

void AuthenticatedAcceptor::acceptWaiting() {
  while (auto socket = listener_.tryAccept()) {
    LOG_TRACE(logSubsys_, "%s: connection from %s", name_.c_str(),
              socket->peerName().c_str());
    pending_.push_back(Pending{std::move(*socket),
                               {},
                               format_.fixedBytes,
                               Deadline::after(kHelloTimeoutSeconds)});
    // Ranks send their hello right after connecting: read it now.
    if (!advance(pending_.back())) {
      pending_.pop_back();
    } else if (pending_.size() > kMaxPendingConnections) {
      drop(pending_.front(),
           format("more than %zu connections waited for their hello at once",
                  kMaxPendingConnections));
      pending_.pop_front();
    }
  }
}

bool AuthenticatedAcceptor::advance(Pending& pending) {
  try {
    while (true) {
      const size_t have = pending.hello.size();
      if (have == pending.wanted) {
        if (!lookAt(pending)) return false;
        continue;
      }
      pending.hello.resize(pending.wanted);
      const size_t got =
          pending.socket.recvSome(pending.hello.data() + have,
                                  pending.wanted - have, format_.what.c_str());
      pending.hello.resize(have + got);
      if (got == 0) return true;  // the rest comes later
      if (have < format_.magicBytes &&
          pending.hello.size() >= format_.magicBytes &&
          !format_.hasMagic(pending.hello.data())) {
        drop(pending, "sent bytes that are not " + format_.what);
        return false;
      }
    }
  } catch (...) {
    // Whatever one connection did (out of memory included) ends only it.
    drop(pending, currentExceptionAsError().what());
    return false;
  }
}

// The hello holds what was wanted. The secret comes first, so that a
// stranger is refused as such whatever else its hello says.
bool AuthenticatedAcceptor::lookAt(Pending& pending) {
  if (pending.hello.size() == format_.fixedBytes && !hasSecret(pending.hello)) {
    refuse(pending, Error(ncclInvalidArgument, format_.wrongSecret));
    return false;
  }
  const HelloVerdict verdict = onHello_(pending.hello, pending.socket);
  switch (verdict.kind_) {
    case HelloVerdict::Kind::kTaken:
      return false;
    case HelloVerdict::Kind::kRefuse:
      refuse(pending, verdict.refusal_);
      return false;
    case HelloVerdict::Kind::kReadUntil:
      // Asking for no more would look at the same bytes forever.
      if (verdict.bytes_ <= pending.hello.size())
        fail(ncclInternalError,
             "%s: a hello of %zu bytes was asked to read until %zu",
             name_.c_str(), pending.hello.size(), verdict.bytes_);
      pending.wanted = verdict.bytes_;
      return true;
  }
  return false;
}

bool AuthenticatedAcceptor::hasSecret(const std::vector<uint8_t>& hello) const {
  Secret claimed{};
  std::memcpy(claimed.data(), hello.data() + format_.secretOffset,
              claimed.size());
  return secretsEqual(claimed, secret_);
}

void AuthenticatedAcceptor::refuse(Pending& pending, const Error& refusal) {
  if (answer_) answer_(pending.socket, refusal);
  drop(pending, refusal.what());
}

// A flood of strangers must not flood the log: the throttle says which
// drops are warnings.
void AuthenticatedAcceptor::drop(Pending& pending, const std::string& reason) {
  const LogLevel level = drops_.next();
  HETCCL_LOG(level, logSubsys_,
             "%s: dropped connection from %s: %s (%zu dropped so far%s)",
             name_.c_str(), pending.socket.peerName().c_str(), reason.c_str(),
             drops_.count(), drops_.note().c_str());
  pending.socket.close();
}

void AuthenticatedAcceptor::dropExpired() {
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (!it->deadline.expired()) {
      ++it;
      continue;
    }
    drop(*it, format("no complete hello within %g s (got %zu bytes)",
                     it->deadline.seconds(), it->hello.size()));
    it = pending_.erase(it);
  }
}

}  // namespace hetccl
