#include "domain/host/host_comm.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "util/error.h"

namespace hetccl {
namespace {

// Smallest range of a copy or reduction worth a helper thread of its own.
constexpr size_t kMinPartBytes = 256 << 10;

// A staging round of HETCCL_SHM_CHUNK per thread that copies it. Every rank
// of the domain lays out its segment and cuts its rounds alike, and ranks
// may be given different threads, so the domain takes the smallest size
// its ranks want.
ShmSettings agreedStaging(Oob& oob, ShmSettings settings, int parts) {
  std::vector<uint64_t> wanted(oob.nranks());
  wanted[oob.rank()] = settings.chunkBytes * static_cast<uint64_t>(parts);
  oob.allGather(wanted.data(), sizeof(uint64_t));
  settings.chunkBytes = *std::min_element(wanted.begin(), wanted.end());
  return settings;
}

}  // namespace

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
    : workers_(memoryHelpers(settings.hostThreads,
                             static_cast<size_t>(oob.nranks())),
               kMinPartBytes),
      world_(oob, agreedStaging(oob, settings, workers_.parts()),
             timeoutSeconds, std::move(abort), std::move(liveness),
             std::move(marks)),
      engine_(world_, workers_) {}

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
