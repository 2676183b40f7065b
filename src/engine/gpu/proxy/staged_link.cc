#include "engine/gpu/proxy/staged_link.h"

#include <algorithm>

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

// A transfer whose pieces the staging streams copy. Done once the engine's
// stream waits for the ring's stream counter to pass its last piece
// (copied into the slots for a send, out of them for a receive): what the
// plan enqueues next may reuse a send's buffer or read a receive's.
class StagedTransfer : public TransferRequest {
 public:
  StagedTransfer(const StagingPath& path, const uint64_t* counter,
                 uint64_t through)
      : module_(path.module),
        stream_(path.stream),
        timeline_(path.timeline),
        counter_(counter),
        through_(through) {}
  bool done() override {
    enqueueWait();
    return true;
  }
  void wait(const AbortSignal&, double) override { enqueueWait(); }

 private:
  void enqueueWait() {
    if (enqueued_) return;
    enqueued_ = true;
    markPhase(timeline_, StreamPhase::TransferWaits);
    module_.check(module_.api().waitValue64(stream_, counter_, through_),
                  "waiting for a transfer's staged pieces");
  }

  const DeviceModule& module_;
  void* stream_;
  StreamTimeline* timeline_;
  const uint64_t* counter_;
  const uint64_t through_;
  bool enqueued_ = false;
};

}  // namespace

StagingRing& StagingRings::make(const DeviceModule& module, size_t slotBytes,
                                size_t slots) {
  auto ring = std::make_unique<StagingRing>(module, slotBytes, slots);
  std::lock_guard<std::mutex> lock(mutex_);
  rings_.push_back(std::move(ring));
  return *rings_.back();
}

void StagingRings::releaseWaits() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& ring : rings_)
    ring->raiseProxyCounter(HETCCL_DEVICE_WAIT_RELEASED);
}

void StagingRings::zeroCounters(const DeviceModule& module, void* stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& ring : rings_)
    for (uint64_t* counter : {ring->streamCounter(), ring->proxyCounter()})
      module.check(module.api().writeValue64(stream, counter, 0),
                   "setting a staging ring's counters to 0");
}

StagedLink::StagedLink(const std::shared_ptr<PiecedLink>& pieced,
                       const StagingPath& path, StagingRings& rings)
    : LinkOver(pieced->innerLink()),
      pieced_(pieced),
      path_(path),
      rings_(rings),
      direct_(inner().movesGpuMemory(path.deviceMemory)) {}

// The rings are pinned on a link's first transfer each way: most links of
// a large communicator never carry any (plans talk to the matching ranks
// of the other domains). A direct lane's ring has its counters only.
StagedLink::Lane& StagedLink::opened(Lane& lane,
                                     StagingProxy::Direction direction) {
  if (lane.ring == nullptr) {
    lane.ring = direct_
                    ? &rings_.make(path_.module, 0, 0)
                    : &rings_.make(path_.module, path_.slotBytes, path_.slots);
    lane.queue =
        &path_.proxy.addQueue(inner(), *lane.ring, direction,
                              direct_ ? path_.deviceMemory : MemoryKind{});
  }
  return lane;
}

template <typename Post>
void StagedLink::forEachPiece(size_t bytes, Post post) const {
  const size_t piece = pieced_->pieceBytesFor(bytes);
  const auto count = static_cast<uint32_t>((bytes + piece - 1) / piece);
  uint32_t index = 0;
  for (size_t offset = 0; offset < bytes; offset += piece)
    post(offset, std::min(piece, bytes - offset), PieceOf{index++, count});
}

void StagedLink::post(const Lane& lane, uint64_t piece, size_t bytes,
                      const CallSignature& call, PieceOf of, char* gpuBuffer) {
  StagingProxy::Job job{lane.queue, piece, bytes, 0, gpuBuffer, call};
  job.pieceOfTransfer = of.index;
  job.transferPieces = of.count;
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
  forEachPiece(bytes, [&](size_t offset, size_t length, PieceOf of) {
    post(lane, lane.pieces++, length, call, of, data + offset);
  });
  check(path_.module.api().writeValue64(
            path_.stream, lane.ring->streamCounter(), lane.pieces),
        "handing GPU buffers to the link");
  return std::make_shared<StagedTransfer>(path_, doneCounter(lane),
                                          lane.pieces);
}

void StagedLink::beginLaunch(bool perLaunch, StagedLaunchScript* script) {
  perLaunch_ = perLaunch;
  script_ = script;
  if (!perLaunch) return;
  for (Lane* lane : {&sends_, &receives_}) lane->pieces = lane->awaited = 0;
}

void StagedLink::check(int status, const char* what) const {
  path_.module.check(status, what);
}

std::shared_ptr<TransferRequest> StagedLink::send(const void* data,
                                                  size_t bytes,
                                                  const CallSignature& call) {
  if (bytes == 0) return emptyTransfer();
  auto* source = static_cast<char*>(const_cast<void*>(data));
  if (direct_)
    return postDirect(sends_, StagingProxy::Direction::kSend, source, bytes,
                      call);
  Lane& d = opened(sends_, StagingProxy::Direction::kSend);
  const StagingRing& ring = *d.ring;
  const auto& api = path_.module.api();
  void* up = path_.copies.up();
  if (path_.unchangedInputs && path_.unchangedInputs->hold(source, bytes))
    path_.copies.followPlanStart(up);
  else
    path_.copies.followEngine(up);
  forEachPiece(bytes, [&](size_t offset, size_t piece, PieceOf of) {
    const uint64_t n = d.pieces++;
    if (n >= ring.slots())
      check(api.waitValue64(up, ring.proxyCounter(), n - ring.slots() + 1),
            "waiting for a free staging slot");
    check(api.copyAsync(ring.slot(n), source + offset, piece, up),
          "copying bytes to send from the GPU");
    check(api.writeValue64(up, ring.streamCounter(), n + 1),
          "signalling a staged piece");
    post(d, n, piece, call, of);
  });
  return std::make_shared<StagedTransfer>(path_, doneCounter(d), d.pieces);
}

std::shared_ptr<TransferRequest> StagedLink::recv(void* data, size_t bytes,
                                                  const CallSignature& call) {
  if (bytes == 0) return emptyTransfer();
  auto* target = static_cast<char*>(data);
  if (direct_)
    return postDirect(receives_, StagingProxy::Direction::kReceive, target,
                      bytes, call);
  Lane& d = opened(receives_, StagingProxy::Direction::kReceive);
  const StagingRing& ring = *d.ring;
  const auto& api = path_.module.api();
  void* down = path_.copies.down();
  path_.copies.followEngine(down);
  forEachPiece(bytes, [&](size_t offset, size_t piece, PieceOf of) {
    const uint64_t n = d.pieces++;
    post(d, n, piece, call, of);
    check(api.waitValue64(down, ring.proxyCounter(), n + 1),
          "waiting for a staged piece");
    check(api.copyAsync(target + offset, ring.slot(n), piece, down),
          "copying received bytes to the GPU");
    check(api.writeValue64(down, ring.streamCounter(), n + 1),
          "freeing a staging slot");
  });
  return std::make_shared<StagedTransfer>(path_, doneCounter(d), d.pieces);
}

void StagedLink::finishLaunch() {
  if (receives_.awaited < receives_.pieces)
    awaitThrough(receives_, doneCounter(receives_), "waiting for receives");
  if (sends_.awaited < sends_.pieces)
    awaitThrough(sends_, sends_.ring->proxyCounter(), "waiting for sends");
  script_ = nullptr;
  if (!perLaunch_) return;
  // Every piece is through: neither the proxy nor a staging stream touches
  // the rings until the next launch, which finds their counters at 0.
  for (const Lane* lane : {&sends_, &receives_})
    if (lane->pieces > 0) zeroCounters(*lane);
}

void StagedLink::zeroCounters(const Lane& lane) {
  const auto& api = path_.module.api();
  for (uint64_t* counter :
       {lane.ring->streamCounter(), lane.ring->proxyCounter()})
    check(api.writeValue64(path_.stream, counter, 0),
          "putting a staging ring's counters back to 0");
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
