// What a communicator's plans across domains take, by collective and
// size: the one-shot plan up to a cut-off, then the pipelined plan in
// chunks of some size. Chosen once, when the communicator is created, by
// the cost model (algo/plan_cost.h) from the link measured between its
// domains; HETCCL_ONE_SHOT_MAX and HETCCL_CHUNK, where set, win over the
// model. Every rank builds it from the same inputs, so all ranks choose
// alike (their transfers must match).
#pragma once

#include <array>
#include <cstddef>
#include <string>

#include "algo/plan_cost.h"
#include "op/op.h"

namespace hetccl {

class PlanTuning {
 public:
  // The parameters' values for every collective and size: no model.
  static PlanTuning fixed(size_t oneShotMaxBytes, size_t chunkBytes);
  // The model's choice, with chunks of at most `chunkBytes` (the scratch
  // the engines hold is sized for it). Where `oneShotMaxSet` or
  // `chunkSet`, the parameter's value stands for every size instead, and
  // the host engine keeps `chunkBytes`; where the model finds both plans
  // alike, `oneShotMaxBytes` decides.
  static PlanTuning fromModel(const PlanCostModel& model, size_t chunkBytes,
                              size_t oneShotMaxBytes, bool oneShotMaxSet,
                              bool chunkSet);

  // The largest buffer (as HETCCL_ONE_SHOT_MAX measures it) that takes
  // `kind`'s one-shot plan; 0 for kinds without one.
  size_t oneShotMax(OpKind kind) const;
  // The largest over every kind, which sizes one-shot scratch.
  size_t largestOneShotMax() const;
  // The chunk of `kind`'s pipelined plan for a buffer of `bytes`.
  size_t chunkFor(OpKind kind, size_t bytes) const;
  // `kind`'s cut-off and where it comes from, for the decision log:
  // "HETCCL_ONE_SHOT_MAX=32K" or "64K (cost model)".
  std::string oneShotMaxText(OpKind kind) const;
  // Where `kind`'s chunks come from: "HETCCL_CHUNK=16M" or "cost model,
  // at most HETCCL_CHUNK=16M".
  std::string chunkSource(OpKind kind) const;
  // "all-reduce: one-shot up to 64K, then chunks of 1M, 4M above 16M; ...",
  // for the INFO log.
  std::string summary() const;

 private:
  // all-reduce, all-gather, reduce-scatter, broadcast, reduce
  static constexpr int kKinds = 5;
  static constexpr int kSizeClasses = 31;  // up to 2^0 .. 2^30 bytes
  static int kindIndex(OpKind kind);
  static int sizeClass(size_t bytes);

  std::array<size_t, kKinds> oneShotMax_{};
  std::array<std::array<size_t, kSizeClasses>, kKinds> chunk_{};
  size_t fixedChunk_ = 0;  // for the kinds the model does not price
  size_t oneShotSetting_ = 0;
  bool oneShotFromModel_ = false;
  bool chunkFromModel_ = false;
};

}  // namespace hetccl
