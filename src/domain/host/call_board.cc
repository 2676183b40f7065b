#include "domain/host/call_board.h"

#include "op/call_disagreement.h"

namespace hetccl {

CallBoard::CallBoard(int rank, std::vector<CallBoardArea*> areas,
                     std::shared_ptr<AbortSignal> abort)
    : rank_(rank),
      areas_(std::move(areas)),
      abort_(std::move(abort)),
      checked_(areas_.size(), 0) {}

void CallBoard::begin(uint64_t index, const CallSignature& call) {
  CallBoardArea::Entry& entry =
      areas_[rank_]->calls[index % CallBoardArea::kRing];
  entry.index.store(0, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  entry.call = call;
  entry.index.store(index, std::memory_order_release);
  current_ = index;
  currentSequence_ = call.sequence;
}

// Read like a sequence lock: the index before and after the call must be
// the one asked for, or the owner was rewriting the entry.
std::optional<CallSignature> CallBoard::published(int rank,
                                                  uint64_t index) const {
  const CallBoardArea::Entry& entry =
      areas_[rank]->calls[index % CallBoardArea::kRing];
  if (entry.index.load(std::memory_order_acquire) != index) return std::nullopt;
  CallSignature call = entry.call;
  std::atomic_thread_fence(std::memory_order_acquire);
  if (entry.index.load(std::memory_order_relaxed) != index) return std::nullopt;
  return call;
}

void CallBoard::checkPeer(int peer) {
  if (peer == rank_ || checked_[peer] == current_) return;
  std::optional<CallSignature> theirs = published(peer, current_);
  if (!theirs) return;
  checked_[peer] = current_;
  std::optional<CallSignature> own = published(rank_, current_);
  if (own && !callsAgree(*own, *theirs)) disagree(rank_, *own, peer, *theirs);
}

std::optional<Error> CallBoard::reportOf(int peer) const {
  const CallBoardArea& area = *areas_[peer];
  if (area.reported.load() == 0) return std::nullopt;
  return callDisagreement(area.report.rankA, area.report.a, area.report.rankB,
                          area.report.b);
}

void CallBoard::checkReports() const {
  for (int peer = 0; peer < static_cast<int>(areas_.size()); ++peer) {
    if (peer == rank_) continue;
    if (std::optional<Error> error = reportOf(peer)) {
      abort_->raise(error->code(), error->what());
      throw *error;
    }
  }
}

void CallBoard::checkAll() const {
  try {
    checkReports();
    for (int peer = 0; peer < static_cast<int>(areas_.size()); ++peer) {
      if (peer == rank_) continue;
      for (const CallBoardArea::Entry& entry : areas_[peer]->calls) {
        const uint64_t index = entry.index.load(std::memory_order_acquire);
        std::optional<CallSignature> theirs =
            index == 0 ? std::nullopt : published(peer, index);
        std::optional<CallSignature> own =
            theirs ? published(rank_, index) : std::nullopt;
        if (own && !callsAgree(*own, *theirs))
          disagree(rank_, *own, peer, *theirs);
      }
    }
  } catch (const Error&) {
    // Raised: the communicator reports it.
  }
}

void CallBoard::report(int rankA, const CallSignature& a, int rankB,
                       const CallSignature& b) const {
  std::lock_guard<std::mutex> lock(reportMutex_);
  CallBoardArea& own = *areas_[rank_];
  if (own.reported.load() != 0) return;  // the first report stands
  own.report.rankA = rankA;
  own.report.rankB = rankB;
  own.report.a = a;
  own.report.b = b;
  own.reported.post(1);
}

void CallBoard::disagree(int rankA, const CallSignature& a, int rankB,
                         const CallSignature& b) const {
  report(rankA, a, rankB, b);
  Error error = callDisagreement(rankA, a, rankB, b);
  abort_->raise(error.code(), error.what());
  throw error;
}

}  // namespace hetccl
