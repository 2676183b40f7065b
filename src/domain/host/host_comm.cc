#include "domain/host/host_comm.h"

#include "util/error.h"

namespace hetccl {

std::shared_ptr<HostComm> HostComm::create(
    Oob& oob, const ShmSettings& settings, double timeoutSeconds,
    std::shared_ptr<AbortSignal> abort,
    std::shared_ptr<const PeerLiveness> liveness, WaitMarks marks) {
  return std::shared_ptr<HostComm>(
      new HostComm(oob, settings, timeoutSeconds, std::move(abort),
                   std::move(liveness), std::move(marks)));
}

HostComm::HostComm(Oob& oob, const ShmSettings& settings, double timeoutSeconds,
                   std::shared_ptr<AbortSignal> abort,
                   std::shared_ptr<const PeerLiveness> liveness,
                   WaitMarks marks)
    : world_(oob, settings, timeoutSeconds, std::move(abort),
             std::move(liveness), std::move(marks)),
      engine_(world_) {}

void HostComm::launch(const std::vector<Op>& ops, StreamHandle stream) {
  // The task owns a reference: a communicator destroyed while its work is
  // queued stays alive until that work has run. The ticket counts the work
  // until the task is gone: run, or never queued because enqueue failed.
  auto self = shared_from_this();
  hostRuntime().enqueue(
      stream, [self, ops, ticket = inflight_.begin()] { self->execute(ops); });
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

ncclResult_t HostComm::asyncError() const {
  world_.board().checkAll();
  const AbortSignal& abort = world_.abortSignal();
  return abort.raised() ? abort.code() : ncclSuccess;
}

bool HostComm::drain(double timeoutSeconds) {
  return inflight_.drain(timeoutSeconds);
}

}  // namespace hetccl
