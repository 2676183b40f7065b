#include "domain/host/shm_world.h"

#include <algorithm>

#include "runtime/runtime_params.h"
#include "shm/segment_exchange.h"
#include "util/error.h"
#include "util/log.h"
#include "util/params.h"

namespace hetccl {
namespace {

constexpr size_t kPage = 4096;

size_t roundUp(size_t value, size_t align) {
  return (value + align - 1) / align * align;
}

}  // namespace

ShmSettings ShmSettings::fromEnvironment() {
  ShmSettings s;
  s.chunkBytes = roundUp(readBytes(kShmChunk), 64);
  s.p2pChunkBytes = roundUp(readBytes(kShmP2pChunk), 64);
  s.directReduceMax = readBytes(kShmDirectReduceMax);
  s.hostThreads = static_cast<int>(readInteger(kHostThreads));
  return s;
}

ShmWorld::Layout ShmWorld::layoutFor(int nranks, const ShmSettings& s) {
  Layout l{};
  size_t flags = static_cast<size_t>(nranks) * sizeof(ShmCounter);
  l.sentOffset = sizeof(Header);
  l.consumedOffset = l.sentOffset + flags;
  l.boardOffset = roundUp(l.consumedOffset + flags, alignof(CallBoardArea));
  l.p2pCallOffset = l.boardOffset + sizeof(CallBoardArea);
  l.inputOffset = roundUp(
      l.p2pCallOffset + static_cast<size_t>(nranks) * 2 * sizeof(CallSignature),
      kPage);
  l.outputOffset = l.inputOffset + 2 * s.chunkBytes;
  l.p2pOffset = l.outputOffset + 2 * s.chunkBytes;
  l.total = roundUp(
      l.p2pOffset + static_cast<size_t>(nranks) * 2 * s.p2pChunkBytes, kPage);
  return l;
}

ShmWorld::ShmWorld(Oob& oob, const ShmSettings& settings, double timeoutSeconds,
                   std::shared_ptr<AbortSignal> abort,
                   std::shared_ptr<const PeerLiveness> liveness,
                   WaitMarks marks)
    : rank_(oob.rank()),
      nranks_(oob.nranks()),
      settings_(settings),
      timeoutSeconds_(timeoutSeconds),
      abort_(std::move(abort)),
      liveness_(std::move(liveness)),
      marks_(std::move(marks)),
      layout_(layoutFor(oob.nranks(), settings)),
      bases_(oob.nranks()) {
  SegmentExchange exchange;
  exchange.what = "host domain";
  exchange.namePrefix = "hetccl";
  exchange.ownBytes = [&] { return layout_.total; };
  exchange.sizedBy = format(
      "HETCCL_SHM_CHUNK=%s and HETCCL_SHM_P2P_CHUNK=%s with %d ranks",
      sizeText(static_cast<int64_t>(settings_.chunkBytes)).c_str(),
      sizeText(static_cast<int64_t>(settings_.p2pChunkBytes)).c_str(), nranks_);
  exchange.maps = [](int) { return true; };
  exchangeSegments(oob, exchange, segments_);
  std::vector<CallBoardArea*> areas;
  for (int r = 0; r < nranks_; ++r) {
    bases_[r] = segments_[r].data();
    areas.push_back(
        reinterpret_cast<CallBoardArea*>(base(r) + layout_.boardOffset));
  }
  board_ = std::make_unique<CallBoard>(rank_, std::move(areas), abort_);
  LOG_INFO(kLogShm,
           "host domain rank %d of %d: shared memory ready, %zu KiB per "
           "segment, chunk %zu KiB",
           rank_, nranks_, layout_.total >> 10, settings_.chunkBytes >> 10);
}

ShmCounter& ShmWorld::sent(int owner, int peer) {
  return reinterpret_cast<ShmCounter*>(base(owner) + layout_.sentOffset)[peer];
}

ShmCounter& ShmWorld::consumed(int owner, int peer) {
  return reinterpret_cast<ShmCounter*>(base(owner) +
                                       layout_.consumedOffset)[peer];
}

char* ShmWorld::input(int r, uint64_t round) {
  return base(r) + layout_.inputOffset + (round & 1) * settings_.chunkBytes;
}

char* ShmWorld::output(int r, uint64_t round) {
  return base(r) + layout_.outputOffset + (round & 1) * settings_.chunkBytes;
}

char* ShmWorld::p2pSlot(int owner, int peer, uint64_t chunk) {
  size_t slot = static_cast<size_t>(peer) * 2 + (chunk & 1);
  return base(owner) + layout_.p2pOffset + slot * settings_.p2pChunkBytes;
}

CallSignature& ShmWorld::p2pCall(int owner, int peer, uint64_t chunk) {
  size_t slot = static_cast<size_t>(peer) * 2 + (chunk & 1);
  return reinterpret_cast<CallSignature*>(base(owner) +
                                          layout_.p2pCallOffset)[slot];
}

void ShmWorld::waitFor(ShmCounter& flag, uint64_t target, int peer,
                       const char* what) {
  board_->checkPeer(peer);
  if (reached(flag, target)) return;
  // Not there at the first look: the wait is marked (a lock, the clock),
  // which the fast path never pays.
  WaitLeg leg;
  leg.kind = WaitLeg::Kind::kDomain;
  leg.step = what;
  WaitScope marked(marks_.waiting.get(), board_->currentSequence(),
                   marks_.global(peer), leg);
  SpinWait wait = makeWait(what, peer);
  while (!reached(flag, target)) {
    pause(wait);
    board_->checkPeer(peer);
    board_->checkReports();
  }
}

}  // namespace hetccl
