#include "engine/gpu/staged_device_comm.h"

#include <limits>

#include "engine/gpu/staging_layout.h"
#include "util/error.h"
#include "util/log.h"
#include "util/spin_wait.h"

namespace hetccl {
namespace {

uint64_t loadAcquire(const uint64_t* word) {
  return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

void storeRelease(uint64_t* word, uint64_t value) {
  __atomic_store_n(word, value, __ATOMIC_RELEASE);
}

// A compare-and-swap loop: two writers may race, and the larger wins.
void raiseToAtLeast(uint64_t* word, uint64_t value) {
  uint64_t seen = loadAcquire(word);
  while (seen < value &&
         !__atomic_compare_exchange_n(word, &seen, value,
                                      /*weak=*/true, __ATOMIC_RELEASE,
                                      __ATOMIC_ACQUIRE)) {
  }
}

constexpr uint64_t kReleaseAll = std::numeric_limits<uint64_t>::max();

}  // namespace

StagedDeviceComm::StagedDeviceComm(
    std::shared_ptr<Executor> hostComm, const DeviceModule& module, int device,
    int rank, int nranks, std::shared_ptr<AbortSignal> abort,
    double timeoutSeconds,
    std::unique_ptr<DeviceShmCollectives> directCollectives)
    : hostComm_(std::move(hostComm)),
      module_(module),
      device_((module.check(module.api().setDevice(device),
                            "making the rank's GPU current"),
               device)),
      rank_(rank),
      nranks_(nranks),
      abort_(std::move(abort)),
      timeoutSeconds_(timeoutSeconds),
      flagMemory_(module, sizeof(Flags)),
      flags_(reinterpret_cast<Flags*>(flagMemory_.data())),
      directCollectives_(std::move(directCollectives)) {
  // Before any stream can be held back by a host word (see loadKernels).
  module_.check(module_.api().loadKernels(), "loading the reduction kernels");
  storeRelease(&flags_->inputsStaged, 0);
  storeRelease(&flags_->hostDone, 0);
  for (Slot& slot : slots_)
    slot.copiedOut = std::make_unique<DeviceEvent>(module_);
}

// Staging and flags must outlive every copy and wait the GPU still has
// queued: let the proxy finish the launches queued on it (as NCCL's destroy
// waits for queued work), release any stream still waiting, then wait for
// the GPU's last copies out of staging.
StagedDeviceComm::~StagedDeviceComm() {
  proxy_.synchronize();  // its tasks catch their own errors
  signalHostDone(kReleaseAll);
  for (Slot& slot : slots_) {
    if (!slot.inUse) continue;
    try {
      slot.copiedOut->synchronize();
    } catch (const Error& e) {
      LOG_WARN(kLogColl, "rank %d: %s", rank_, e.what());
    }
  }
}

void StagedDeviceComm::launch(const std::vector<Op>& ops, StreamHandle stream) {
  abort_->throwIfRaised();
  checkNotCapturing(stream);
  std::lock_guard<std::mutex> lock(launchMutex_);
  try {
    if (directCollectives_ && directCollectives_->handles(ops))
      directCollectives_->launch(ops[0], stream);
    else
      enqueueLaunch(ops, stream);
  } catch (const Error& e) {
    // Half-enqueued work leaves the ranks out of step.
    abort_->raise(e.code(), e.what());
    abort();
    throw;
  }
}

// The proxy cannot follow a graph's replays: each launch is matched by one
// run of the host plan, so a captured launch is refused up front.
void StagedDeviceComm::checkNotCapturing(StreamHandle stream) const {
  int capturing = 0;
  module_.check(module_.api().streamIsCapturing(stream, &capturing),
                "asking whether the stream is being captured");
  if (capturing)
    fail(ncclInvalidUsage,
         "rank %d: collectives of a heterogeneous communicator on GPU "
         "buffers cannot be captured in a CUDA graph (a host proxy runs "
         "them, once per launch); launch them outside the capture",
         rank_);
}

StagedDeviceComm::Slot& StagedDeviceComm::slotFor(uint64_t sequence,
                                                  size_t bytes) {
  Slot& slot = slots_[sequence % kSlots];
  if (slot.inUse) slot.copiedOut->synchronize();
  if (slot.memory.size() < bytes) {
    slot.memory = PinnedHostMemory();  // free the old one first
    slot.memory = PinnedHostMemory(module_, bytes);
    LOG_INFO(kLogAlloc, "rank %d: %zu bytes of pinned staging", rank_, bytes);
  }
  return slot;
}

void StagedDeviceComm::enqueueLaunch(const std::vector<Op>& ops,
                                     StreamHandle stream) {
  const auto& api = module_.api();
  const uint64_t sequence = ++launched_;
  Slot& slot = slotFor(sequence, stagingBytes(ops, rank_, nranks_));
  StagedOps staged = stageOps(ops, rank_, nranks_, slot.memory.data());
  for (const StagingCopy& copy : staged.copiesIn)
    module_.check(api.copyAsync(copy.dst, copy.src, copy.bytes, stream),
                  "copying inputs to host staging");
  module_.check(api.writeValue64(stream, &flags_->inputsStaged, sequence),
                "signalling staged inputs");
  proxy_.enqueue(
      [this, sequence, hostOps = std::move(staged.hostOps),
       ticket = proxyTasks_.begin()] { runOnHost(sequence, hostOps); });
  module_.check(api.waitValue64(stream, &flags_->hostDone, sequence),
                "waiting for the host plan");
  for (const StagingCopy& copy : staged.copiesOut)
    module_.check(api.copyAsync(copy.dst, copy.src, copy.bytes, stream),
                  "copying results from host staging");
  slot.copiedOut->record(stream);
  slot.inUse = true;
}

// On the proxy thread. The stream waits for hostDone whatever happens, so
// it is always raised: to this launch on success, past every launch on
// failure (the communicator's error then says what went wrong).
void StagedDeviceComm::runOnHost(uint64_t sequence,
                                 const std::vector<Op>& hostOps) {
  try {
    SpinWait wait(*abort_, nullptr, timeoutSeconds_,
                  "the GPU stream to stage the inputs", -1);
    while (loadAcquire(&flags_->inputsStaged) < sequence) wait.pause();
    hostComm_->launch(hostOps, nullptr);
    signalHostDone(sequence);
  } catch (...) {
    Error error = currentExceptionAsError();
    LOG_WARN(kLogColl, "rank %d: staged operation failed: %s", rank_,
             error.what());
    abort_->raise(error.code(), error.what());
    signalHostDone(kReleaseAll);
  }
}

// Raise to the maximum: the proxy thread and abort() both write the word,
// and it must never go down (a stream that saw a value has passed it).
void StagedDeviceComm::signalHostDone(uint64_t value) {
  raiseToAtLeast(&flags_->hostDone, value);
}

bool StagedDeviceComm::drain(double timeoutSeconds) {
  return proxyTasks_.drain(timeoutSeconds) && hostComm_->drain(timeoutSeconds);
}

void StagedDeviceComm::abort() {
  signalHostDone(kReleaseAll);
  if (directCollectives_) directCollectives_->releaseWaits();
}

}  // namespace hetccl
