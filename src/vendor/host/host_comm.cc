#include "vendor/host/host_comm.h"

#include <chrono>

#include "util/error.h"

namespace hetccl {

std::shared_ptr<HostComm> HostComm::create(
    Oob& oob, const ShmSettings& settings, std::shared_ptr<AbortSignal> abort,
    std::shared_ptr<const PeerLiveness> liveness) {
  return std::shared_ptr<HostComm>(
      new HostComm(oob, settings, std::move(abort), std::move(liveness)));
}

HostComm::HostComm(Oob& oob, const ShmSettings& settings,
                   std::shared_ptr<AbortSignal> abort,
                   std::shared_ptr<const PeerLiveness> liveness)
    : world_(oob, settings, std::move(abort), std::move(liveness)),
      engine_(world_) {}

void HostComm::launch(const std::vector<Op>& ops, StreamHandle stream) {
  {
    std::lock_guard<std::mutex> lock(inflightMutex_);
    ++inflight_;
  }
  // The task owns a reference: a communicator destroyed while its work is
  // queued stays alive until that work has run.
  auto self = shared_from_this();
  struct Completion {
    HostComm* comm;
    ~Completion() {
      std::lock_guard<std::mutex> lock(comm->inflightMutex_);
      if (--comm->inflight_ == 0) comm->idle_.notify_all();
    }
  };
  auto task = [self, ops] {
    Completion done{self.get()};
    self->execute(ops);
  };
  try {
    hostRuntime().enqueue(stream, std::move(task));
  } catch (...) {
    // An inline run that failed has already completed; a failed enqueue
    // never ran, so its count must be returned here.
    if (stream != nullptr) {
      Completion undo{this};
    }
    throw;
  }
}

void HostComm::execute(const std::vector<Op>& ops) {
  AbortSignal& abort = world_.abortSignal();
  abort.throwIfRaised();
  try {
    engine_.run(ops);
  } catch (...) {
    Error error = currentExceptionAsError();
    abort.raise(error.code(), error.what());
    throw error;
  }
}

bool HostComm::drain(double timeoutSeconds) {
  std::unique_lock<std::mutex> lock(inflightMutex_);
  auto limit = std::chrono::duration<double>(timeoutSeconds);
  return idle_.wait_for(lock, limit, [this] { return inflight_ == 0; });
}

}  // namespace hetccl
