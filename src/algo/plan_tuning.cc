#include "algo/plan_tuning.h"

#include <algorithm>
#include <cmath>

#include "op/decision_log.h"
#include "util/error.h"
#include "util/params.h"

namespace hetccl {
namespace {

// The kinds the model prices, in the order of PlanTuning's rows.
constexpr OpKind kPriced[] = {OpKind::AllReduce, OpKind::AllGather,
                              OpKind::ReduceScatter, OpKind::Broadcast,
                              OpKind::Reduce};

// Chunks below the links' smallest piece would only add steps.
constexpr size_t kSmallestChunk = size_t{256} << 10;
// A smaller chunk must save this much of the modelled time to be taken:
// each chunk costs CPU ranks more than the model sees (on 16 cores chunks
// of a quarter measured 1.2-1.5x slower for all-gathers and
// reduce-scatters of 16-64 MB where the model saw 5-10 % gained; on 2
// cores they were faster), so only a clear gain counts.
constexpr double kSmallerChunkGain = 0.25;
// The largest one-shot plan but the all-reduce's: above it
// the one-shot all-gather measured up to 2.9x slower than the model said
// on 16 cores (1 MB, 2 CPU ranks over tcp), for reasons it does not see.
// The one-shot all-reduce held its gains to 16 MB on GPU ranks.
constexpr size_t kOneShotCeiling = size_t{512} << 10;
// Plans whose modelled times differ by at most this much are a tie, which
// HETCCL_ONE_SHOT_MAX's default decides: where both plans take the same
// hops and no domain steps, what the model cannot see decided the
// measurements, one way on CPU ranks and the other on GPU ranks
// (bench/results/cost-model-2026-12-04.md).
constexpr double kTie = 0.02;

// From the chunk that holds the whole size (or the largest) down.
size_t bestChunk(const PlanCostModel& model, OpKind kind, size_t bytes,
                 size_t largest) {
  size_t best = largest;
  while (best / 2 >= std::max(bytes, kSmallestChunk)) best /= 2;
  double bestUs = model.pipelinedUs(kind, bytes, best);
  for (size_t chunk = best / 2; chunk >= kSmallestChunk; chunk /= 2) {
    const double us = model.pipelinedUs(kind, bytes, chunk);
    if (us < bestUs * (1 - kSmallerChunkGain)) {
      best = chunk;
      bestUs = us;
    }
  }
  return best;
}

std::string kindName(OpKind kind) {
  switch (kind) {
    case OpKind::AllReduce:
      return "all-reduce";
    case OpKind::AllGather:
      return "all-gather";
    case OpKind::ReduceScatter:
      return "reduce-scatter";
    case OpKind::Reduce:
      return "reduce";
    default:
      return "broadcast";
  }
}

std::string sizeOf(size_t bytes) {
  return sizeText(static_cast<int64_t>(bytes));
}

}  // namespace

int PlanTuning::kindIndex(OpKind kind) {
  for (int i = 0; i < kKinds; ++i)
    if (kPriced[i] == kind) return i;
  return -1;
}

// The decision log's classes (2^(k-1), 2^k], so that what it shows of a
// class's first op holds for the whole class.
int PlanTuning::sizeClass(size_t bytes) {
  return static_cast<int>(
      std::min<size_t>(DecisionLog::sizeClass(bytes), kSizeClasses - 1));
}

PlanTuning PlanTuning::fixed(size_t oneShotMaxBytes, size_t chunkBytes) {
  PlanTuning tuning;
  tuning.oneShotMax_.fill(oneShotMaxBytes);
  for (auto& row : tuning.chunk_) row.fill(chunkBytes);
  tuning.fixedChunk_ = chunkBytes;
  tuning.oneShotSetting_ = oneShotMaxBytes;
  return tuning;
}

// Per size class: the chunk that models fastest, then the one-shot plan
// for every size up to the first one where the pipelined plan in that
// chunk beats it (never beyond a chunk: its scratch is sized for one; nor
// beyond kOneShotCeiling but for the all-reduce).
PlanTuning PlanTuning::fromModel(const PlanCostModel& model, size_t chunkBytes,
                                 size_t oneShotMaxBytes, bool oneShotMaxSet,
                                 bool chunkSet) {
  // CPU ranks keep HETCCL_CHUNK: on 16 cores the model's smaller chunks
  // measured up to 1.4x slower for all-gathers and reduce-scatters of 4-16
  // MB (on 2 cores, with 4 ranks, they were faster): each chunk costs the
  // host engine more than the model sees (bench/results/
  // cost-model-2026-12-04.md).
  const bool keepChunk = chunkSet || !model.layout().gpuEngine;
  PlanTuning tuning = fixed(oneShotMaxBytes, chunkBytes);
  tuning.chunkFromModel_ = !keepChunk;
  tuning.oneShotFromModel_ = !oneShotMaxSet;
  for (int i = 0; i < kKinds; ++i) {
    const OpKind kind = kPriced[i];
    // A larger size never takes a smaller chunk: a dip would come from
    // how the chunk count rounds, not from the link.
    if (!keepChunk)
      for (int k = 0; k < kSizeClasses; ++k)
        tuning.chunk_[i][k] =
            std::max(k == 0 ? 0 : tuning.chunk_[i][k - 1],
                     bestChunk(model, kind, size_t{1} << k, chunkBytes));
    if (oneShotMaxSet) continue;
    size_t cutOff = 0;
    const size_t ceiling = kind == OpKind::AllReduce
                               ? chunkBytes
                               : std::min(chunkBytes, kOneShotCeiling);
    for (int k = 0; k < kSizeClasses && (size_t{1} << k) <= ceiling; ++k) {
      const size_t bytes = size_t{1} << k;
      const double oneShot = model.oneShotUs(kind, bytes);
      const double pipelined =
          model.pipelinedUs(kind, bytes, tuning.chunk_[i][k]);
      const bool tie =
          std::abs(oneShot - pipelined) <= kTie * std::max(oneShot, pipelined);
      if (tie ? bytes > oneShotMaxBytes : oneShot > pipelined) break;
      cutOff = bytes;
    }
    tuning.oneShotMax_[i] = cutOff;
  }
  return tuning;
}

size_t PlanTuning::oneShotMax(OpKind kind) const {
  const int i = kindIndex(kind);
  return i < 0 ? 0 : oneShotMax_[i];
}

size_t PlanTuning::largestOneShotMax() const {
  return *std::max_element(oneShotMax_.begin(), oneShotMax_.end());
}

size_t PlanTuning::chunkFor(OpKind kind, size_t bytes) const {
  const int i = kindIndex(kind);
  return i < 0 ? fixedChunk_ : chunk_[i][sizeClass(bytes)];
}

std::string PlanTuning::oneShotMaxText(OpKind kind) const {
  return oneShotFromModel_
             ? format("%s (cost model)", sizeOf(oneShotMax(kind)).c_str())
             : format("HETCCL_ONE_SHOT_MAX=%s",
                      sizeOf(oneShotSetting_).c_str());
}

std::string PlanTuning::chunkSource(OpKind kind) const {
  return chunkFromModel_ && kindIndex(kind) >= 0
             ? format("cost model, at most HETCCL_CHUNK=%s",
                      sizeOf(fixedChunk_).c_str())
             : format("HETCCL_CHUNK=%s", sizeOf(fixedChunk_).c_str());
}

// Each kind's cut-off, then its chunk above that and wherever it changes.
std::string PlanTuning::summary() const {
  std::string text;
  for (int i = 0; i < kKinds; ++i) {
    const OpKind kind = kPriced[i];
    text += oneShotMax_[i] == 0
                ? format("%s%s: no one-shot, chunks of",
                         text.empty() ? "" : "; ", kindName(kind).c_str())
                : format("%s%s: one-shot up to %s, then chunks of",
                         text.empty() ? "" : "; ", kindName(kind).c_str(),
                         sizeOf(oneShotMax_[i]).c_str());
    size_t shown = 0;
    const int first = oneShotMax_[i] == 0 ? 0 : sizeClass(oneShotMax_[i]) + 1;
    for (int k = first; k < kSizeClasses; ++k) {
      if (chunk_[i][k] == shown) continue;
      text +=
          format("%s %s", shown == 0 ? "" : ",", sizeOf(chunk_[i][k]).c_str());
      if (k > first)
        text += format(" above %s", sizeOf(size_t{1} << (k - 1)).c_str());
      shown = chunk_[i][k];
    }
  }
  return text;
}

}  // namespace hetccl
