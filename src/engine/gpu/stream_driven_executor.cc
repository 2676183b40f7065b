#include "engine/gpu/stream_driven_executor.h"

#include <chrono>
#include <thread>

#include "op/op_traits.h"
#include "runtime/device/current_device.h"
#include "util/error.h"
#include "util/log.h"

namespace hetccl {
namespace {

// How long a release lets the callers' streams run out this path's work.
constexpr double kReleaseDrainSeconds = 10;

}  // namespace

StreamDrivenExecutor::StreamDrivenExecutor(
    StreamDrivenSetup setup, std::unique_ptr<GpuPlanExecutor> plans)
    : module_(setup.module),
      device_(setup.device),
      rank_(setup.rank),
      nranks_(setup.nranks),
      abort_(std::move(setup.abort)),
      markMemory_(module_, sizeof(Marks)),
      marks_(reinterpret_cast<Marks*>(markMemory_.data())),
      collectives_(std::move(setup.collectives)),
      plans_(std::move(plans)),
      agreement_(collectives_->outboxes(), *abort_, setup.timeoutSeconds),
      transferAgreement_(collectives_->outboxes(), *abort_,
                         setup.timeoutSeconds),
      decisions_(rank_),
      liveness_(std::move(setup.liveness)),
      rankNames_(std::move(setup.rankNames)) {
  __atomic_store_n(&marks_->reached, 0, __ATOMIC_RELEASE);
  __atomic_store_n(&marks_->passed, 0, __ATOMIC_RELEASE);
  watch_ = std::make_unique<LaunchWatch>(
      &marks_->reached, &marks_->passed, setup.timeoutSeconds,
      [this](uint64_t launch) { throwIfPeerLost(launch); },
      [this](const Error& error) { failed(error); }, setup.stallWarnSeconds,
      [this](uint64_t launch, double seconds) {
        LOG_WARN(kLogColl,
                 "rank %d: %s on the stream-driven path (among this host's "
                 "%d GPU ranks) has waited %.0f s for the other ranks' "
                 "streams%s; it waits until they take part (a stopped, hung "
                 "or slower rank, or one waiting for another), or fails "
                 "after HETCCL_TIMEOUT if that is set",
                 rank_, describeLaunch(launch).c_str(), nranks_, seconds,
                 ranksBehind(launch).c_str());
      });
  LOG_INFO(kLogInit,
           "rank %d: stream-driven shared-memory collectives among the "
           "host's %d GPU ranks",
           rank_, nranks_);
}

std::function<void(const Error&)> StreamDrivenExecutor::outboxesFailure(
    DeviceShmCollectives& collectives) {
  DeviceOutboxes* outboxes = &collectives.outboxes();
  return [outboxes](const Error& error) {
    outboxes->markFailed(error.code(), error.what());
  };
}

// A clean destroy found every launch complete (finalize drained them), so
// nothing waits and the peers learn how far this rank went; a failed
// communicator's streams are released instead.
StreamDrivenExecutor::~StreamDrivenExecutor() {
  CurrentDevice ours(module_, device_);
  watch_.reset();
  if (!abort_->raised() && idle())
    collectives_->outboxes().markLeft(collectiveLaunches_);
  else
    releaseWaits();
}

void StreamDrivenExecutor::launch(const std::vector<Op>& ops,
                                  StreamHandle stream) {
  noticePeersFailure();
  abort_->throwIfRaised();
  CurrentDevice ours(module_, device_);
  std::vector<Op> collectives;
  for (const Op& op : ops)
    if (!isPointToPoint(op.kind)) collectives.push_back(op);
  const bool capturing = capturingAllowed(collectives, stream);
  std::lock_guard<std::mutex> lock(launchMutex_);
  stagedLaunchFailed_ = false;
  try {
    launchMarked(ops, stream, capturing);
  } catch (const Error& e) {
    // Half-enqueued work leaves the ranks out of step.
    if (!stagedLaunchFailed_) failed(e);
    throw;
  }
}

// Every send and receive takes this path, whatever else its group holds,
// so that both ends of a transfer take the same one; so does a collective
// the outboxes run (the same answer on every rank).
bool StreamDrivenExecutor::handled(const std::vector<Op>& collectives) const {
  return collectives.empty() || collectives_->handles(collectives);
}

// Work on the outboxes replays unchanged (their flags hold no sequence
// number); a staged collective only where the plan executor allows it.
bool StreamDrivenExecutor::capturingAllowed(const std::vector<Op>& collectives,
                                            StreamHandle stream) const {
  if (!handled(collectives))
    return plans_->capturingAllowed(collectives, stream);
  int capturing = 0;
  module_.check(module_.api().streamIsCapturing(stream, &capturing),
                "asking whether the stream is being captured");
  return capturing;
}

// The caller's stream marks where it reaches the launch and where it is
// past it, for the watch that fails a launch stalled by a lost peer or
// beyond HETCCL_TIMEOUT. A graph would replay the marks' values unchanged,
// which tells the watch nothing: a captured launch has none, and the watch
// fails the communicator as soon as a peer is lost from then on, since a
// replay may be waiting for it.
void StreamDrivenExecutor::launchMarked(const std::vector<Op>& ops,
                                        StreamHandle stream, bool capturing) {
  std::vector<Op> collectives;
  for (const Op& op : ops)
    if (!isPointToPoint(op.kind)) collectives.push_back(op);
  // Before anything is enqueued: calls that disagree enqueue nothing.
  const bool agreed = agreeOnCollective(collectives);
  const LaneWaits transferWaits = transferAgreement_.post(ops);
  if (capturing) {
    watch_->watchBetweenLaunches();
    enqueue(ops, stream, capturing, agreed, transferWaits);
    return;
  }
  const auto& api = module_.api();
  const uint64_t sequence = ++launched_;
  record(sequence, ops);
  module_.check(api.writeValue64(stream, &marks_->reached, sequence),
                "marking the start of a launch");
  try {
    enqueue(ops, stream, capturing, agreed, transferWaits);
  } catch (...) {
    // What was enqueued still ends with the mark, which a release waits
    // for.
    api.writeValue64(stream, &marks_->passed, sequence);
    throw;
  }
  module_.check(api.writeValue64(stream, &marks_->passed, sequence),
                "marking the end of a launch");
}

// The collective of a launch, if the outboxes run it, posted for
// comparison (CallAgreement); true if its agreement is known already. Op
// number 0 (the engine's own tests) is not checked.
bool StreamDrivenExecutor::agreeOnCollective(
    const std::vector<Op>& collectives) {
  if (collectives.empty() || !handled(collectives) ||
      collectives[0].sequence == 0)
    return true;
  return agreement_.post(signatureOf(collectives[0]));
}

// The group's sends and receives first, then its collectives on the
// caller's stream.
void StreamDrivenExecutor::enqueue(const std::vector<Op>& ops,
                                   StreamHandle stream, bool capturing,
                                   bool agreed,
                                   const LaneWaits& transferWaits) {
  std::vector<Op> transfers, collectives;
  for (const Op& op : ops)
    (isPointToPoint(op.kind) ? transfers : collectives).push_back(op);
  if (!transfers.empty())
    collectives_->launchPointToPoint(transfers, stream, transferWaits);
  if (collectives.empty()) return;
  decisions_.note(collectives[0],
                  [&] { return collectives_->describeChoice(collectives); });
  if (handled(collectives))
    collectives_->launch(collectives[0], stream, capturing, agreed);
  else
    launchStaged(collectives, stream);
}

void StreamDrivenExecutor::launchStaged(const std::vector<Op>& collectives,
                                        StreamHandle stream) {
  try {
    plans_->launch(collectives, stream);
  } catch (const Error&) {
    stagedLaunchFailed_ = true;
    throw;
  }
}

ncclResult_t StreamDrivenExecutor::asyncError() const {
  if (noticePeersFailure()) return abort_->code();
  return plans_->asyncError();
}

// Another GPU rank of this host failed: the ranks are out of step, and
// this rank's next operation must fail rather than wait for it.
bool StreamDrivenExecutor::noticePeersFailure() const {
  std::optional<Error> failure = peersFailure("");
  if (!failure) return false;
  if (!abort_->raised()) abort_->raise(failure->code(), failure->what());
  return true;
}

std::optional<Error> StreamDrivenExecutor::peersFailure(
    const std::string& during) const {
  const DeviceOutboxes& outboxes = collectives_->outboxes();
  const int failedRank = outboxes.failedRank();
  if (failedRank < 0 || failedRank == rank_) return std::nullopt;
  const Error failure = outboxes.failureOf(failedRank);
  if (failure.code() == ncclInvalidUsage) return failure;
  return Error(ncclRemoteError,
               format("%s failed%s: %s", rankNames_.at(failedRank).c_str(),
                      during.c_str(), failure.what()));
}

void StreamDrivenExecutor::failed(const Error& error) {
  LOG_WARN(kLogColl, "rank %d: GPU engine: %s", rank_, error.what());
  abort_->raise(error.code(), error.what());
  collectives_->outboxes().markFailed(error.code(), error.what());
}

// A peer that failed, a peer process that is gone, or a peer that left
// before an operation this launch needs. Between launches (graph replays
// carry no marks) only a peer that did not leave cleanly counts.
void StreamDrivenExecutor::throwIfPeerLost(uint64_t launch) const {
  const DeviceOutboxes& outboxes = collectives_->outboxes();
  const std::string during =
      launch ? format(" during %s", describeLaunch(launch).c_str()) : "";
  if (std::optional<Error> failure = peersFailure(during)) throw *failure;
  for (int r = 0; r < nranks_; ++r) {
    if (r == rank_) continue;
    if (outboxes.left(r)) {
      const uint64_t completed = outboxes.collectivesCompletedBy(r);
      if (launch && needsDeparted(launch, r, completed))
        fail(ncclRemoteError,
             "%s left the communicator (ncclCommDestroy or exit) after "
             "completing %llu collective launches; this rank's %s needs it",
             rankNames_.at(r).c_str(),
             static_cast<unsigned long long>(completed),
             describeLaunch(launch).c_str());
      continue;
    }
    if (liveness_ && liveness_->lost(r)) {
      try {
        liveness_->throwIfLost(r);
      } catch (const Error& lost) {
        fail(ncclRemoteError, "%s%s", lost.what(), during.c_str());
      }
    }
  }
}

void StreamDrivenExecutor::record(uint64_t sequence,
                                  const std::vector<Op>& ops) {
  LaunchRecord launch;
  launch.sequence = sequence;
  for (const Op& op : ops) {
    if (isPointToPoint(op.kind) && op.root < 64)
      launch.peers |= uint64_t(1) << op.root;
    else if (!isPointToPoint(op.kind) && launch.collectiveIndex == 0)
      launch.collectiveIndex = ++collectiveLaunches_;
  }
  launch.first = ops.front();
  launch.ops = ops.size();
  for (const Op& op : ops)
    if (!isPointToPoint(op.kind)) launch.call = op.sequence;
  std::lock_guard<std::mutex> lock(recordsMutex_);
  records_[sequence % kLaunchRecords] = launch;
}

bool StreamDrivenExecutor::needsDeparted(uint64_t launch, int peer,
                                         uint64_t collectivesCompleted) const {
  std::lock_guard<std::mutex> lock(recordsMutex_);
  const LaunchRecord& record = records_[launch % kLaunchRecords];
  if (record.sequence != launch) return true;  // too old to know: assume so
  if (record.collectiveIndex > collectivesCompleted) return true;
  return (record.peers >> peer) & 1;
}

std::string StreamDrivenExecutor::describeLaunch(uint64_t launch) const {
  std::lock_guard<std::mutex> lock(recordsMutex_);
  const LaunchRecord& record = records_[launch % kLaunchRecords];
  if (record.sequence != launch)
    return format("launch #%llu", static_cast<unsigned long long>(launch));
  std::string text =
      format("launch #%llu: %s", static_cast<unsigned long long>(launch),
             describeCall(signatureOf(record.first)).c_str());
  if (record.ops > 1)
    text += format(" and %zu more in its group", record.ops - 1);
  return text;
}

// The streams wait on words that any of the host's GPU ranks may owe; the
// calls the others posted in the outboxes say which of them have not made
// the launch's collective yet (a rank stopped or busy before its call), and
// a launch of sends and receives names the ranks it exchanges with.
std::string StreamDrivenExecutor::ranksBehind(uint64_t launch) const {
  LaunchRecord record;
  {
    std::lock_guard<std::mutex> lock(recordsMutex_);
    record = records_[launch % kLaunchRecords];
  }
  if (record.sequence != launch) return "";
  std::string names;
  const DeviceOutboxes& outboxes = collectives_->outboxes();
  for (int r = 0; r < nranks_; ++r) {
    if (r == rank_) continue;
    const bool owes =
        record.call != 0
            ? __atomic_load_n(&outboxes.postedCall(r, record.call).number,
                              __ATOMIC_ACQUIRE) < record.call
            : r < 64 && ((record.peers >> r) & 1);
    if (owes) names += (names.empty() ? "" : ", ") + rankNames_.at(r);
  }
  if (names.empty()) return "";
  if (record.call == 0)
    return format(" (its sends and receives: %s)", names.c_str());
  return format("; not yet made op #%llu: %s",
                static_cast<unsigned long long>(record.call), names.c_str());
}

bool StreamDrivenExecutor::launchesPassed() const {
  return __atomic_load_n(&marks_->passed, __ATOMIC_ACQUIRE) >=
         launched_.load(std::memory_order_acquire);
}

bool StreamDrivenExecutor::idle() const {
  return launchesPassed() && plans_->launchesIdle();
}

bool StreamDrivenExecutor::drain(double timeoutSeconds) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration<double>(timeoutSeconds);
  const uint64_t last = launched_.load();
  while (__atomic_load_n(&marks_->passed, __ATOMIC_ACQUIRE) < last) {
    if (abort_->raised()) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  const double left =
      std::chrono::duration<double>(deadline - std::chrono::steady_clock::now())
          .count();
  return plans_->drain(left > 0 ? left : 0);
}

// The outboxes' waits end first: the plan executor's abort waits for the
// streams to run out their work, which may include this path's.
void StreamDrivenExecutor::abort() {
  collectives_->outboxes().releaseWaits();
  plans_->abort();
  awaitLaunchesPassed();
}

void StreamDrivenExecutor::releaseStreams() { releaseWaits(); }

void StreamDrivenExecutor::releaseWaits() {
  collectives_->outboxes().releaseWaits();
  plans_->releaseStreams();
  awaitLaunchesPassed();
}

// The callers' streams read the outboxes themselves (a low-latency kernel
// polls their lines): the outboxes must outlive that work. Bounded, since
// a stream held elsewhere must not hold a release forever.
void StreamDrivenExecutor::awaitLaunchesPassed() const {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration<double>(kReleaseDrainSeconds);
  while (!launchesPassed()) {
    if (std::chrono::steady_clock::now() > deadline) {
      LOG_WARN(kLogColl,
               "rank %d: the callers' streams are still inside stream-driven "
               "launches %g s after their waits were released",
               rank_, kReleaseDrainSeconds);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// The process exits with the communicator alive (no destroy): as a
// destroy would, it leaves cleanly if nothing is in flight, and otherwise
// lets its streams go so that the exit does not wait for them.
void StreamDrivenExecutor::leaveAtExit() {
  if (!abort_->raised() && idle()) {
    collectives_->outboxes().markLeft(collectiveLaunches_);
    return;
  }
  abort_->raise(ncclSystemError, "the process is exiting");
  releaseWaits();
}

}  // namespace hetccl
