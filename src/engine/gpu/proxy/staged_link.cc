#include "engine/gpu/proxy/staged_link.h"

#include <algorithm>
#include <functional>

#include "runtime/device/device_module.h"

namespace hetccl {
namespace {

// An empty transfer, which the link never carries.
class EmptyTransfer : public TransferRequest {
 public:
  bool done() override { return true; }
  void wait(const AbortSignal&, double) override {}
};

std::shared_ptr<TransferRequest> emptyTransfer() {
  static const auto empty = std::make_shared<EmptyTransfer>();
  return empty;
}

// A transfer whose last step on the engine's stream is enqueued when the
// plan first waits for it (or asks whether it is done): from then on
// what the plan enqueues may use its buffer.
class EnqueuedOnWait : public TransferRequest {
 public:
  explicit EnqueuedOnWait(std::function<void()> enqueue)
      : enqueue_(std::move(enqueue)) {}
  bool done() override {
    enqueueOnce();
    return true;
  }
  void wait(const AbortSignal&, double) override { enqueueOnce(); }

 private:
  void enqueueOnce() {
    if (enqueued_) return;
    enqueued_ = true;
    enqueue_();
  }

  const std::function<void()> enqueue_;
  bool enqueued_ = false;
};

// A transfer whose pieces the staging streams copy: the engine's stream
// waits for the ring's stream counter to pass its last piece (copied into
// the slots for a send, out of them for a receive). `beforeWait` (may be
// empty) enqueues what the counter waits for: a receive's copies.
std::shared_ptr<TransferRequest> stagedTransfer(
    const StagingPath& path, const uint64_t* counter, uint64_t through,
    std::function<void()> beforeWait = {}) {
  return std::make_shared<EnqueuedOnWait>(
      [&module = path.module, stream = path.stream, timeline = path.timeline,
       counter, through, beforeWait = std::move(beforeWait)] {
        if (beforeWait) beforeWait();
        markPhase(timeline, StreamPhase::TransferWaits);
        module.check(module.api().waitValue64(stream, counter, through),
                     "waiting for a transfer's staged pieces");
      });
}

}  // namespace

StagedLink::StagedLink(const std::shared_ptr<PiecedLink>& pieced,
                       const StagingPath& path, StagingRings& rings)
    : LinkOver(pieced->innerLink()),
      pieced_(pieced),
      path_(path),
      rings_(rings),
      counters_(rings.linkCounters()),
      direct_(inner().movesGpuMemory(path.deviceMemory)) {}

// The rings are pinned on a link's first transfer each way: most links of
// a large communicator never carry any (plans talk to the matching ranks
// of the other domains). A direct lane's ring has its counters only.
StagedLink::Lane& StagedLink::opened(Lane& lane,
                                     StagingProxy::Direction direction) {
  if (lane.ring == nullptr) {
    uint64_t* counters =
        counters_ + (direction == StagingProxy::Direction::kSend ? 0 : 2);
    lane.ring = direct_
                    ? &rings_.make(0, 0, counters)
                    : &rings_.make(path_.largestPiece, path_.slots, counters);
    lane.queue =
        &path_.proxy.addQueue(inner(), *lane.ring, direction,
                              direct_ ? path_.deviceMemory : MemoryKind{});
  }
  return lane;
}

void StagedLink::post(const Lane& lane, uint64_t piece, size_t bytes,
                      const CallSignature& call, TransferPiece of,
                      char* buffer) {
  StagingProxy::Job job{lane.queue, piece, bytes, 0, buffer, call};
  job.ofTransfer = of;
  if (path_.domainSteps) job.domainStepsBefore = path_.domainSteps->enqueued();
  if (script_ != nullptr) {
    script_->add(job);
  } else {
    job.gate = *path_.launchGate;
    path_.proxy.post(job);
  }
}

// A staged transfer is done for the engine's stream once its pieces are
// copied (out of its buffer, into the GPU): the staging stream's counter.
// A direct one once the link has moved them: the proxy's.
const uint64_t* StagedLink::doneCounter(const Lane& lane) const {
  return direct_ ? lane.ring->proxyCounter() : lane.ring->streamCounter();
}

// The proxy posts the pieces once the engine's stream reaches the counter
// write: a send's bytes are then written, a receive's buffer no longer in
// use.
std::shared_ptr<TransferRequest> StagedLink::postDirect(
    Lane& lane, StagingProxy::Direction direction, char* data, size_t bytes,
    const CallSignature& call) {
  opened(lane, direction);
  pieced_->forEachPiece(
      bytes, [&](size_t offset, size_t length, TransferPiece of) {
        post(lane, lane.pieces++, length, call, of, data + offset);
      });
  check(path_.module.api().writeValue64(
            path_.stream, lane.ring->streamCounter(), lane.pieces),
        "handing GPU buffers to the link");
  return stagedTransfer(path_, doneCounter(lane), lane.pieces);
}

void StagedLink::beginLaunch(bool perLaunch, StagedLaunchScript* script) {
  perLaunch_ = perLaunch;
  script_ = script;
  for (Lane* lane : {&sends_, &receives_}) {
    if (perLaunch) lane->pieces = lane->awaited = 0;
    lane->launchStart = lane->pieces;
    lane->staged = lane->kernelCopied = false;
    lane->pending.clear();
  }
}

bool StagedLink::copiedByKernel(const Lane& lane, size_t bytes) const {
  return !direct_ && bytes <= path_.lowLatencyMaxBytes &&
         bytes <= pieced_->pieceBytesFor(bytes) && !lane.staged &&
         lane.pieces - lane.launchStart < path_.slots;
}

void StagedLink::enqueueStagedCopy(const hetcclDeviceStagedCopy& copy,
                                   const char* what) {
  markPhase(path_.timeline, StreamPhase::TransferWaits);
  check(path_.module.api().stagedCopy(&copy, path_.stream), what);
}

// The kernel waits for the piece's slot to be free (sent by the proxy
// `slots` pieces ago), copies the bytes in and signals the proxy.
std::shared_ptr<TransferRequest> StagedLink::sendByKernel(
    Lane& lane, const char* source, size_t bytes, const CallSignature& call) {
  StagingRing& ring = *lane.ring;
  const uint64_t n = lane.pieces++;
  lane.kernelCopied = true;
  hetcclDeviceStagedCopy copy{};
  copy.dst = ring.slotFor(n, bytes);
  copy.src = source;
  copy.bytes = bytes;
  if (n >= ring.slots()) {
    copy.waitWord = ring.proxyCounter();
    copy.waitValue = n - ring.slots() + 1;
  }
  copy.signalWord = ring.streamCounter();
  copy.signalValue = n + 1;
  enqueueStagedCopy(copy, "copying a small piece to send from the GPU");
  post(lane, n, bytes, call, TransferPiece{0, 1}, static_cast<char*>(copy.dst));
  // The stream itself copied the bytes: the buffer is free behind it.
  return emptyTransfer();
}

std::shared_ptr<TransferRequest> StagedLink::recvByKernel(
    Lane& lane, char* target, size_t bytes, const CallSignature& call) {
  const uint64_t n = lane.pieces++;
  lane.kernelCopied = true;
  char* slot = lane.ring->slotFor(n, bytes);
  post(lane, n, bytes, call, TransferPiece{0, 1}, slot);
  lane.pending.push_back(PendingReceive{n, target, bytes, {slot}, true, 0});
  return std::make_shared<EnqueuedOnWait>(
      [this, n] { enqueueReceivesThrough(n); });
}

void StagedLink::enqueuePendingReceives() {
  enqueueReceivesThrough(UINT64_MAX);
}

// In piece order, so that the stream counter only grows.
void StagedLink::enqueueReceivesThrough(uint64_t first) {
  std::vector<PendingReceive>& pending = receives_.pending;
  size_t taken = 0;
  for (; taken < pending.size() && pending[taken].piece <= first; ++taken) {
    if (pending[taken].byKernel)
      enqueueKernelReceive(pending[taken]);
    else
      enqueueStagedReceive(pending[taken]);
  }
  pending.erase(pending.begin(), pending.begin() + taken);
}

// The kernel waits for the proxy to have received the piece, copies it out
// and frees the slot.
void StagedLink::enqueueKernelReceive(const PendingReceive& receive) {
  const StagingRing& ring = *receives_.ring;
  hetcclDeviceStagedCopy copy{};
  copy.dst = receive.target;
  copy.src = receive.slots.front();
  copy.bytes = receive.bytes;
  copy.waitWord = ring.proxyCounter();
  copy.waitValue = receive.piece + 1;
  copy.signalWord = ring.streamCounter();
  copy.signalValue = receive.piece + 1;
  enqueueStagedCopy(copy, "copying a small received piece to the GPU");
  receives_.awaited = std::max(receives_.awaited, receive.piece + 1);
}

// The down stream waits for each run of pieces (slot_runs.h), copies it
// out and frees its slots.
void StagedLink::enqueueStagedReceive(const PendingReceive& receive) {
  const Lane& lane = receives_;
  const StagingRing& ring = *lane.ring;
  const auto& api = path_.module.api();
  void* down = path_.copies.nextDown();
  path_.copies.followMark(down, receive.enginePosition);
  const std::vector<StagedPiece> pieces =
      piecesIn(receive.bytes, receive.slots);
  for (const SlotRun& run : slotRuns(pieces, piecesPerCopy(lane, receive.piece),
                                     RunEdge::kLastAlone)) {
    const uint64_t first = receive.piece + run.first;
    const uint64_t end = first + run.count;
    check(api.waitValue64(down, ring.proxyCounter(), end),
          "waiting for staged pieces");
    copyRun(receive.target + run.offset, run.width, pieces[run.first].slot,
            run.pitch, run, down, "copying received bytes to the GPU");
    // This launch's kernels raise the counter on the engine's stream.
    if (run.first == 0 && (lane.kernelCopied || path_.copies.pairs() > 1))
      awaitEarlierPieces(down, lane, first);
    check(api.writeValue64(down, ring.streamCounter(), end),
          "freeing staging slots");
  }
}

// A lane's stream counter only grows: before a transfer raises it, the
// pieces before it have, where something else may still be raising it
// for them (this launch's kernels on the engine's stream; with several
// staging streams, the transfers before on another one).
void StagedLink::awaitEarlierPieces(void* stream, const Lane& lane,
                                    uint64_t first) const {
  check(
      path_.module.api().waitValue64(stream, lane.ring->streamCounter(), first),
      "waiting for the copies of earlier pieces");
}

size_t StagedLink::piecesPerCopy(const Lane& lane, uint64_t first) const {
  // Counters put back to 0 per launch may still hold the last launch's.
  const uint64_t done = lane.ring->streamDone();
  const uint64_t waiting = first > done ? first - done : 0;
  return runLength(path_.piecesPerCopy, path_.runsFrom, waiting);
}

// A run's pieces lie `width` apart in the GPU buffer and `pitch` apart in
// the ring: one plain copy where those agree, else a row per piece.
void StagedLink::copyRun(char* dst, size_t dpitch, const char* src,
                         size_t spitch, const SlotRun& run, void* stream,
                         const char* what) const {
  const auto& api = path_.module.api();
  if (run.plain())
    check(api.copyAsync(dst, src, run.bytes, stream), what);
  else
    check(
        api.copy2DAsync(dst, dpitch, src, spitch, run.width, run.count, stream),
        what);
}

std::vector<StagedPiece> StagedLink::piecesIn(
    size_t bytes, const std::vector<char*>& slots) const {
  std::vector<StagedPiece> pieces;
  pieced_->forEachPiece(bytes, [&](size_t, size_t piece, TransferPiece of) {
    pieces.push_back(StagedPiece{slots[of.index], piece});
  });
  return pieces;
}

void StagedLink::check(int status, const char* what) const {
  path_.module.check(status, what);
}

std::shared_ptr<TransferRequest> StagedLink::send(const void* data,
                                                  size_t bytes,
                                                  const CallSignature& call,
                                                  TransferPiece) {
  if (bytes == 0) return emptyTransfer();
  auto* source = static_cast<char*>(const_cast<void*>(data));
  if (direct_)
    return postDirect(sends_, StagingProxy::Direction::kSend, source, bytes,
                      call);
  Lane& d = opened(sends_, StagingProxy::Direction::kSend);
  if (copiedByKernel(d, bytes)) return sendByKernel(d, source, bytes, call);
  d.staged = true;
  StagingRing& ring = *d.ring;
  const auto& api = path_.module.api();
  void* up = path_.copies.nextUp();
  // After this launch's kernels, which raised the stream counter before it.
  if (!d.kernelCopied && path_.unchangedInputs &&
      path_.unchangedInputs->hold(source, bytes))
    path_.copies.followPlanStart(up);
  else
    path_.copies.followEngine(up);
  std::vector<char*> slots;
  pieced_->forEachPiece(bytes, [&](size_t, size_t piece, TransferPiece) {
    slots.push_back(ring.slotFor(d.pieces + slots.size(), piece));
  });
  const std::vector<StagedPiece> pieces = piecesIn(bytes, slots);
  const auto count = static_cast<uint32_t>(pieces.size());
  for (const SlotRun& run :
       slotRuns(pieces, piecesPerCopy(d, d.pieces), RunEdge::kFirstAlone)) {
    const uint64_t first = d.pieces + run.first;
    const uint64_t end = first + run.count;
    if (end > ring.slots())
      check(api.waitValue64(up, ring.proxyCounter(), end - ring.slots()),
            "waiting for free staging slots");
    copyRun(pieces[run.first].slot, run.pitch, source + run.offset, run.width,
            run, up, "copying bytes to send from the GPU");
    // This launch's kernels ran before: the up stream follows the engine's.
    if (run.first == 0 && path_.copies.pairs() > 1)
      awaitEarlierPieces(up, d, first);
    check(api.writeValue64(up, ring.streamCounter(), end),
          "signalling staged pieces");
    for (size_t i = run.first; i < run.first + run.count; ++i)
      post(d, d.pieces + i, pieces[i].bytes, call,
           TransferPiece{static_cast<uint32_t>(i), count}, pieces[i].slot);
  }
  d.pieces += count;
  return stagedTransfer(path_, doneCounter(d), d.pieces);
}

std::shared_ptr<TransferRequest> StagedLink::recv(void* data, size_t bytes,
                                                  const CallSignature& call,
                                                  TransferPiece) {
  if (bytes == 0) return emptyTransfer();
  auto* target = static_cast<char*>(data);
  if (direct_)
    return postDirect(receives_, StagingProxy::Direction::kReceive, target,
                      bytes, call);
  Lane& d = opened(receives_, StagingProxy::Direction::kReceive);
  if (copiedByKernel(d, bytes)) return recvByKernel(d, target, bytes, call);
  d.staged = true;
  PendingReceive receive{d.pieces, target, bytes, {}, false, 0};
  pieced_->forEachPiece(bytes, [&](size_t, size_t piece, TransferPiece of) {
    const uint64_t n = d.pieces++;
    receive.slots.push_back(d.ring->slotFor(n, piece));
    post(d, n, piece, call, of, receive.slots.back());
  });
  receive.enginePosition = path_.copies.markEngine();
  const uint64_t first = receive.piece;
  d.pending.push_back(std::move(receive));
  return stagedTransfer(path_, doneCounter(d), d.pieces,
                        [this, first] { enqueueReceivesThrough(first); });
}

void StagedLink::finishLaunch() {
  enqueuePendingReceives();  // if the executor has not
  if (receives_.awaited < receives_.pieces)
    awaitThrough(receives_, doneCounter(receives_), "waiting for receives");
  script_ = nullptr;
  if (perLaunch_ && (sends_.pieces > 0 || receives_.pieces > 0))
    return resetCounters();
  if (sends_.awaited < sends_.pieces)
    awaitThrough(sends_, sends_.ring->proxyCounter(), "waiting for sends");
}

// Once the last send is through, neither the proxy nor a staging stream
// touches the rings until the next launch, which finds their counters at
// 0. The kernel's wait is the launch's wait for its sends.
void StagedLink::resetCounters() {
  hetcclDeviceStagedCopy copy{};
  copy.dst = counters_;
  copy.src = rings_.zeros();
  copy.bytes = StagingRings::kLinkCounters * sizeof(uint64_t);
  if (sends_.pieces > 0) {
    copy.waitWord = sends_.ring->proxyCounter();
    copy.waitValue = sends_.pieces;
  }
  enqueueStagedCopy(copy, "putting the staging rings' counters back to 0");
  sends_.awaited = sends_.pieces;
}

// The engine's stream waits until `counter` passes every piece of `lane`.
void StagedLink::awaitThrough(Lane& lane, const uint64_t* counter,
                              const char* what) {
  markPhase(path_.timeline, StreamPhase::TransferWaits);
  check(path_.module.api().waitValue64(path_.stream, counter, lane.pieces),
        what);
  lane.awaited = lane.pieces;
}

}  // namespace hetccl
