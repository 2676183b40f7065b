#include "engine/gpu/proxy/staging_proxy.h"

#include <sched.h>

#include <map>

#include "engine/gpu/proxy/staged_launch_script.h"
#include "runtime/device/device_module.h"
#include "util/log.h"

namespace hetccl {
namespace {

// Its collective's number; 0 for a send or receive.
uint64_t collectiveOf(const StagingProxy::Job& job) {
  return job.call.pointToPoint() ? 0 : job.call.sequence;
}

}  // namespace

// The pieces of one ring: waiting for their slot (receives) or their bytes
// (sends), then posted on the link. Readiness only grows with the piece
// number, so each list is served from its front and stays in link order.
class StagingProxy::Queue {
 public:
  Queue(Link& link, const StagingRing& ring, Direction direction,
        MemoryKind gpuMemory)
      : link(link), ring(ring), direction(direction), gpuMemory(gpuMemory) {}

  struct Posted {
    uint64_t piece;
    std::shared_ptr<TransferRequest> onLink;
    std::chrono::steady_clock::time_point since;
    uint64_t collective;  // its number; 0 for a send or receive
    CallSignature call;
    std::chrono::steady_clock::time_point adopted;
    PieceCount pieces;  // done: the ones before it in its transfer
    size_t bytes;
  };

  Link& link;
  const StagingRing& ring;
  const Direction direction;
  const MemoryKind gpuMemory;  // 0: staged in the ring's slots
  std::deque<Job> waiting;
  std::deque<Posted> posted;

  // A direct queue's ring has no slots: a receive waits, like a send,
  // for the stream to reach its piece.
  bool ready(uint64_t piece) const {
    if (direction == Direction::kSend) return ring.streamDone() > piece;
    return piece < ring.slots() || ring.streamDone() > piece - ring.slots();
  }

  std::shared_ptr<TransferRequest> post(const Job& job) const {
    const bool sending = direction == Direction::kSend;
    if (gpuMemory != MemoryKind{})
      return sending ? link.sendGpu(gpuMemory, job.buffer, job.bytes, job.call,
                                    job.ofTransfer)
                     : link.recvGpu(gpuMemory, job.buffer, job.bytes, job.call,
                                    job.ofTransfer);
    return sending ? link.send(job.buffer, job.bytes, job.call, job.ofTransfer)
                   : link.recv(job.buffer, job.bytes, job.call, job.ofTransfer);
  }
};

StagingProxy::StagingProxy(std::shared_ptr<AbortSignal> abort,
                           double timeoutSeconds, const uint64_t* gateWord,
                           PinnedHostMemory controlWords,
                           std::function<void(const Error&)> onFailure,
                           WaitingCall* waiting,
                           const DomainStepLog* domainSteps,
                           bool domainMarksWaits,
                           std::unique_ptr<ProxyTrace> trace)
    : abort_(std::move(abort)),
      timeoutSeconds_(timeoutSeconds),
      gateWord_(gateWord),
      controlWords_(std::move(controlWords)),
      onFailure_(std::move(onFailure)),
      waiting_(waiting),
      domainSteps_(domainSteps),
      domainMarksWaits_(domainMarksWaits),
      trace_(std::move(trace)) {
  thread_ = std::thread([this] { run(); });
}

StagingProxy::~StagingProxy() { stop(); }

void StagingProxy::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

StagingProxy::Queue& StagingProxy::addQueue(Link& link, const StagingRing& ring,
                                            Direction direction,
                                            MemoryKind gpuMemory) {
  std::lock_guard<std::mutex> lock(mutex_);
  return queues_.emplace_back(link, ring, direction, gpuMemory);
}

void StagingProxy::post(const Job& job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    inbox_.push_back(job);
  }
  wake_.notify_one();
}

uint64_t* StagingProxy::takeControlWord() {
  std::lock_guard<std::mutex> lock(mutex_);
  const size_t words = controlWords_.size() / sizeof(uint64_t);
  if (usedControlWords_ == words)
    fail(ncclInvalidUsage,
         "a communicator's GPU engine holds at most %zu captured launches "
         "that cross domains through its proxy, and this capture would be "
         "one more; capture fewer launches (or destroy the communicator "
         "to release them)",
         words);
  return reinterpret_cast<uint64_t*>(controlWords_.data()) +
         usedControlWords_++;
}

void StagingProxy::addScript(std::unique_ptr<StagedLaunchScript> script) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    newScripts_.push_back(std::move(script));
  }
  wake_.notify_one();
}

void StagingProxy::adopt(std::vector<Queue*>& active) {
  for (auto& script : newScripts_) scripts_.push_back(std::move(script));
  newScripts_.clear();
  if (failed_) inbox_.clear();  // a failed proxy moves nothing more
  if (inbox_.empty()) return;
  const auto now = std::chrono::steady_clock::now();
  for (Job& job : inbox_) {
    if (job.queue->waiting.empty() && job.queue->posted.empty())
      active.push_back(job.queue);
    job.adopted = now;
    job.queue->waiting.push_back(job);
  }
  inbox_.clear();
}

bool StagingProxy::gateOpen(const Job& job) const {
  return job.gate == 0 ||
         __atomic_load_n(gateWord_, __ATOMIC_ACQUIRE) >= job.gate;
}

// Polls: the streams' counters, the scripts' control words and the links'
// requests have no way to wake this thread. While there is work it yields
// its core between polls for a while (a piece is often a few microseconds
// from done), then naps. After a failure it only serves the scripts.
void StagingProxy::run() {
  std::vector<Queue*> active;
  int idlePolls = 0;
  for (;;) {
    bool failed, released;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      adopt(active);
      if (stopping_) return;
      if (released_ && !failed_) dropQueued();
      failed = failed_;
      released = released_;
      if ((active.empty() || failed) && scripts_.empty()) {
        account({});
        wake_.wait(lock, [&] {
          return stopping_ || !inbox_.empty() || !newScripts_.empty() ||
                 released_ != released;
        });
        continue;
      }
    }
    bool moved = false;
    OldestWait oldest;
    if (domainSteps_) oldest.streamInStep = domainSteps_->inside();
    try {
      if (!failed && abort_->raised())
        throw Error(
            abort_->code() == ncclSuccess ? ncclSystemError : abort_->code(),
            abort_->reason());
      moved = serveScripts(active, failed, released);
      if (!failed)
        for (Queue* queue : active) {
          moved = progress(*queue) || moved;
          offerWait(*queue, oldest);
        }
    } catch (...) {
      failAll(currentExceptionAsError());
    }
    markWait(oldest);
    account(active);
    std::vector<Queue*> still;
    for (Queue* queue : active)
      if (!queue->waiting.empty() || !queue->posted.empty())
        still.push_back(queue);
    active.swap(still);
    if (moved)
      idlePolls = 0;
    else
      pause(idlePolls);
  }
}

// Leaves only its own wait: the domain's back-end may have marked one
// since. While the stream is inside a domain step, a back-end that marks
// its waits speaks for this rank: its mark stands.
void StagingProxy::markWait(const OldestWait& oldest) {
  if (!waiting_) return;
  if (!oldest.since || (oldest.streamInStep != 0 && domainMarksWaits_)) {
    if (marked_ != 0) waiting_->leave(marked_);
    marked_ = 0;
    return;
  }
  if (oldest.domainStep == 0) {
    marked_ = waiting_->enter(oldest.collective, oldest.peer, *oldest.since,
                              oldest.leg);
    return;
  }
  WaitLeg leg = oldest.leg;
  uint64_t collective = oldest.collective;
  if (const auto step = domainSteps_->step(oldest.domainStep)) {
    leg.step = step->name;
    leg.stepIndex = step->index;
    leg.stepCount = step->count;
    if (step->sequence != 0) collective = step->sequence;
  }
  marked_ = waiting_->enter(collective, -1, *oldest.since, leg);
}

void StagingProxy::pause(int& idlePolls) const {
  constexpr int kYieldsBeforeNapping = 2000;
  if (++idlePolls < kYieldsBeforeNapping)
    sched_yield();
  else
    std::this_thread::sleep_for(std::chrono::microseconds(20));
}

bool StagingProxy::serveScripts(std::vector<Queue*>& active, bool failed,
                                bool released) {
  using Script = StagedLaunchScript;
  if (released) {
    std::lock_guard<std::mutex> lock(mutex_);  // addQueue may add one
    for (const Queue& queue : queues_)
      queue.ring.raiseProxyCounter(HETCCL_DEVICE_WAIT_RELEASED);
  }
  bool moved = false;
  for (const auto& script : scripts_) {
    if (__atomic_load_n(script->control(), __ATOMIC_ACQUIRE) != Script::kStart)
      continue;
    if (!failed) startScript(*script, active);
    __atomic_store_n(script->control(), Script::kIdle, __ATOMIC_RELEASE);
    moved = true;
  }
  return moved;
}

// The stream reached the script's launch: every earlier launch is done,
// so every job waiting belongs to a later launch.
void StagingProxy::startScript(const StagedLaunchScript& script,
                               std::vector<Queue*>& active) {
  std::map<Queue*, size_t> placed;
  const auto now = std::chrono::steady_clock::now();
  for (const Job& job : script.jobs()) {
    if (job.queue->waiting.empty() && job.queue->posted.empty())
      active.push_back(job.queue);
    size_t& at = placed[job.queue];
    auto inserted =
        job.queue->waiting.insert(job.queue->waiting.begin() + at++, job);
    inserted->adopted = now;
  }
}

// Posts the pieces whose slot is ready, then retires finished ones in
// order. Throws the link's error or a timeout.
bool StagingProxy::progress(Queue& queue) {
  bool moved = false;
  while (!queue.waiting.empty() && gateOpen(queue.waiting.front()) &&
         queue.ready(queue.waiting.front().piece)) {
    const Job& job = queue.waiting.front();
    queue.posted.push_back(
        {job.piece, queue.post(job), std::chrono::steady_clock::now(),
         collectiveOf(job), job.call, job.adopted,
         PieceCount{job.ofTransfer.index, job.ofTransfer.count}, job.bytes});
    queue.waiting.pop_front();
    moved = true;
  }
  while (!queue.posted.empty()) {
    Queue::Posted& front = queue.posted.front();
    if (!front.onLink->done()) {
      double waited = std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - front.since)
                          .count();
      if (timeoutSeconds_ > 0 && waited > timeoutSeconds_)
        fail(ncclRemoteError,
             "a %s rank %d did not complete within %g s: rank %d is "
             "gone or stuck (set HETCCL_TIMEOUT to wait longer)",
             queue.direction == Direction::kSend ? "send to" : "receive from",
             queue.link.peer(), timeoutSeconds_, queue.link.peer());
      break;
    }
    queue.ring.raiseProxyCounter(front.piece + 1);
    if (trace_)
      trace_->add({queue.direction == Direction::kSend, front.piece,
                   front.bytes, front.call, front.adopted, front.since,
                   std::chrono::steady_clock::now()});
    occupancy_.addPiece(queue.direction == Direction::kSend
                            ? ProxyOccupancy::kSends
                            : ProxyOccupancy::kReceives,
                        front.bytes);
    queue.posted.pop_front();
    moved = true;
  }
  return moved;
}

// A direction is on the network while any of its pieces is posted; else
// it waits for the stream while a piece's launch is reached, else for a
// launch while pieces are queued.
void StagingProxy::account(const std::vector<Queue*>& active) {
  using State = ProxyOccupancy::State;
  State states[2] = {State::kIdle, State::kIdle};
  for (const Queue* queue : active) {
    State& state = states[queue->direction == Direction::kSend ? 0 : 1];
    State found = State::kIdle;
    if (!queue->posted.empty())
      found = State::kNetwork;
    else if (!queue->waiting.empty())
      found =
          gateOpen(queue->waiting.front()) ? State::kStream : State::kLaunch;
    if (found > state) state = found;
  }
  occupancy_.account(std::chrono::steady_clock::now(), states[0], states[1]);
}

// After progress(): the queue's front posted piece is not done, or its
// front waiting piece waits for the stream. Pieces finish in order on a
// queue, so those before it in its transfer are done.
void StagingProxy::offerWait(const Queue& queue, OldestWait& oldest) const {
  const TransferWay way = queue.direction == Direction::kSend
                              ? TransferWay::kSend
                              : TransferWay::kReceive;
  if (!queue.posted.empty()) {
    const Queue::Posted& front = queue.posted.front();
    if (oldest.since &&
        (oldest.posted ? !(front.since < *oldest.since)
                       : oldest.adopted < front.adopted &&
                             oldest.collective != front.collective))
      return;
    oldest.collective = front.collective;
    oldest.peer = queue.link.peer();
    oldest.since = front.since;
    oldest.adopted = front.adopted;
    oldest.posted = true;
    oldest.domainStep = 0;
    oldest.leg = WaitLeg{WaitLeg::Kind::kLink, way, EngineStage::kNetwork,
                         front.pieces, nullptr};
    return;
  }
  if (queue.waiting.empty()) return;
  const Job& job = queue.waiting.front();
  const uint64_t collective = collectiveOf(job);
  if (oldest.since && !(job.adopted < oldest.adopted &&
                        (!oldest.posted || collective != oldest.collective)))
    return;
  // A direct queue's piece waits for the stream to reach its transfer.
  EngineStage stage = EngineStage::kStreamNotThere;
  if (gateOpen(job) && queue.gpuMemory == MemoryKind{})
    stage = queue.direction == Direction::kSend ? EngineStage::kDeviceToHost
                                                : EngineStage::kHostToDevice;
  oldest.collective = collective;
  oldest.peer = queue.link.peer();
  oldest.since = job.adopted;
  oldest.adopted = job.adopted;
  oldest.posted = false;
  oldest.domainStep = 0;
  oldest.leg =
      WaitLeg{WaitLeg::Kind::kLink, way, stage,
              PieceCount{job.ofTransfer.index, job.ofTransfer.count}, nullptr};
  // The stream is inside a domain step that comes before the piece's
  // work: the piece waits for the domain.
  if (oldest.streamInStep != 0 &&
      job.domainStepsBefore >= oldest.streamInStep) {
    oldest.domainStep = oldest.streamInStep;
    oldest.leg = WaitLeg{};
    oldest.leg.kind = WaitLeg::Kind::kDomain;
    oldest.leg.way = way;
  }
}

// Nothing more is posted: a link that failed may still hold slots, and the
// ranks are out of step. The streams stay blocked until the engine
// releases them.
void StagingProxy::failAll(const Error& error) {
  if (!abort_->raised())
    LOG_WARN(kLogNet, "GPU engine proxy: %s", error.what());
  {
    std::lock_guard<std::mutex> lock(mutex_);
    dropQueued();
  }
  onFailure_(error);
}

void StagingProxy::dropQueued() {
  failed_ = true;
  inbox_.clear();
  for (Queue& queue : queues_) {
    queue.waiting.clear();
    queue.posted.clear();
  }
}

void StagingProxy::release() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    released_ = true;
  }
  wake_.notify_one();
}

}  // namespace hetccl
