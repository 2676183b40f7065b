#include "algo/plan_choice.h"

#include <algorithm>
#include <cstdint>

#include "algo/pipeline.h"
#include "op/decision_log.h"
#include "util/dtype.h"
#include "util/error.h"
#include "util/params.h"

namespace hetccl {
namespace {

// The threshold's side of a plan that has a one-shot form: what is
// measured, its bytes, and how many rows a chunk spreads over (the plans
// that cut every rank's block chunk all blocks at once).
struct OneShotRule {
  const char* measured;  // null: direct transfers, neither plan
  size_t bytes;
  size_t rows;
};

OneShotRule ruleOf(const PlanContext& ctx, const Op& op) {
  const size_t bytes = op.count * dtypeSize(op.dtype);
  const size_t nranks = static_cast<size_t>(ctx.nranks);
  switch (op.kind) {
    case OpKind::AllReduce:
    case OpKind::Broadcast:
    case OpKind::Reduce:
      return {"buffer", bytes, 1};
    case OpKind::AllGather:
      return {"output", bytes * nranks, nranks};
    case OpKind::ReduceScatter:
      return {"input", bytes * nranks, nranks};
    case OpKind::AlltoAll:
    case OpKind::Gather:
    case OpKind::Scatter:
    case OpKind::Send:
    case OpKind::Recv:
      return {nullptr, bytes, 0};
  }
  failUnknownOpKind(op.kind);
}

std::string settingText(const char* name, size_t bytes) {
  return format("%s=%s", name, sizeText(static_cast<int64_t>(bytes)).c_str());
}

// The one-shot cut-off of `kind` and where it came from, and the same of
// the chunk.
std::string oneShotMaxText(const PlanContext& ctx, OpKind kind) {
  return ctx.tuning ? ctx.tuning->oneShotMaxText(kind)
                    : settingText("HETCCL_ONE_SHOT_MAX", ctx.oneShotMaxBytes);
}

std::string chunkSource(const PlanContext& ctx, OpKind kind) {
  return ctx.tuning ? ctx.tuning->chunkSource(kind)
                    : settingText("HETCCL_CHUNK", ctx.chunkBytes);
}

size_t oneShotMaxOf(const PlanContext& ctx, OpKind kind) {
  return ctx.tuning ? ctx.tuning->oneShotMax(kind) : ctx.oneShotMaxBytes;
}

std::string describePipelined(const PlanContext& ctx,
                              const PlanChoice& choice) {
  return format("pipelined plan: %s of %s > %s; %zu chunk(s) of up to %s (%s)",
                choice.measured, bytesText(choice.measuredBytes).c_str(),
                oneShotMaxText(ctx, choice.kind).c_str(), choice.chunks,
                bytesText(choice.chunkBytes).c_str(),
                chunkSource(ctx, choice.kind).c_str());
}

}  // namespace

PlanChoice choosePlan(const PlanContext& ctx, const Op& op) {
  const OneShotRule rule = ruleOf(ctx, op);
  PlanChoice choice;
  choice.kind = op.kind;
  choice.measured = rule.measured;
  choice.measuredBytes = rule.bytes;
  if (rule.rows == 0) {
    choice.plan = PlanChoice::Plan::Direct;
    return choice;
  }
  if (rule.bytes <= oneShotMaxOf(ctx, op.kind)) {
    choice.plan = PlanChoice::Plan::OneShot;
    return choice;
  }
  const size_t elt = dtypeSize(op.dtype);
  choice.chunkElements = elementsPerChunk(
      ctx.tuning ? ctx.tuning->chunkFor(op.kind, rule.bytes) : ctx.chunkBytes,
      elt, rule.rows);
  choice.chunkBytes =
      std::min(choice.chunkElements, op.count) * elt * rule.rows;
  choice.chunks = (op.count + choice.chunkElements - 1) / choice.chunkElements;
  return choice;
}

std::string describePlan(const PlanContext& ctx, const PlanChoice& choice) {
  if (choice.plan == PlanChoice::Plan::OneShot)
    return format("one-shot plan: %s of %s <= %s", choice.measured,
                  bytesText(choice.measuredBytes).c_str(),
                  oneShotMaxText(ctx, choice.kind).c_str());
  if (choice.plan == PlanChoice::Plan::Pipelined)
    return describePipelined(ctx, choice);
  return format(
      "direct transfers: across domains in pieces of up to %s (%s over %d "
      "ranks, at least 4K)",
      bytesText(
          pointToPointPieceBytes(ctx.chunkBytes, ctx.nranks, SIZE_MAX, false))
          .c_str(),
      settingText("HETCCL_CHUNK", ctx.chunkBytes).c_str(), ctx.nranks);
}

}  // namespace hetccl
