#include "engine/gpu/proxy/domain_step_log.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>
#include <string>

#include "op/op_traits.h"
#include "runtime/device/device_module.h"

namespace hetccl {
namespace {

// NCCL's function name without its prefix, as the calls are named:
// "reduceScatter"; kept for as long as the process lives.
const char* callName(OpKind kind) {
  static const std::array<std::string, op_kinds::kOpKindCount> names = [] {
    std::array<std::string, op_kinds::kOpKindCount> made;
    for (size_t i = 0; i < op_kinds::kOpKindCount; ++i) {
      made[i] = op_kinds::kOpTraits[i].name;
      if (!made[i].empty())
        made[i][0] = static_cast<char>(std::tolower(made[i][0]));
    }
    return made;
  }();
  const auto index = static_cast<size_t>(kind);
  return index < op_kinds::kOpKindCount ? names[index].c_str() : "step";
}

// "reduceScatter"; a group of several kinds: its sends and receives.
const char* stepName(const std::vector<Op>& ops) {
  for (const Op& op : ops)
    if (op.kind != ops.front().kind) return "sends and receives";
  return callName(ops.front().kind);
}

uint64_t sequenceOf(const std::vector<Op>& ops) {
  return isPointToPoint(ops.front().kind) ? 0 : ops.front().sequence;
}

}  // namespace

DomainStepLog::DomainStepLog(const DeviceModule& module)
    : memory_(module, sizeof(uint64_t)),
      word_(reinterpret_cast<uint64_t*>(memory_.data())) {
  __atomic_store_n(word_, 0, __ATOMIC_RELEASE);
}

uint64_t DomainStepLog::add(const std::vector<Op>& ops) {
  if (ops.empty()) return enqueued_;
  const uint64_t number = enqueued_ + 1;
  Step step{sequenceOf(ops), stepName(ops), 1, 0};
  std::lock_guard<std::mutex> lock(mutex_);
  const Entry& previous = entries_[enqueued_ % kRemembered];
  // The steps of one op follow each other (runPlans runs op by op).
  if (runStart_ <= enqueued_ && previous.number == enqueued_ &&
      step.sequence != 0 && previous.step.sequence == step.sequence) {
    step.index = static_cast<uint16_t>(std::min<unsigned>(
        previous.step.index + 1u, std::numeric_limits<uint16_t>::max()));
  } else {
    closeRun();
    runStart_ = number;
  }
  entries_[number % kRemembered] = Entry{number, step};
  enqueued_ = number;
  return number;
}

void DomainStepLog::endLaunch() {
  std::lock_guard<std::mutex> lock(mutex_);
  closeRun();
  runStart_ = enqueued_ + 1;
}

// The run's last step has the highest index; those still remembered learn
// it.
void DomainStepLog::closeRun() {
  if (runStart_ > enqueued_) return;
  const uint16_t count = entries_[enqueued_ % kRemembered].step.index;
  const uint64_t first = std::max<uint64_t>(
      runStart_, enqueued_ >= kRemembered ? enqueued_ - kRemembered + 1 : 1);
  for (uint64_t n = first; n <= enqueued_; ++n)
    entries_[n % kRemembered].step.count = count;
}

std::optional<DomainStepLog::Step> DomainStepLog::step(uint64_t number) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const Entry& entry = entries_[number % kRemembered];
  if (number == 0 || entry.number != number) return std::nullopt;
  return entry.step;
}

void LoggedDomainSteps::launch(const std::vector<Op>& ops,
                               StreamHandle stream) {
  if (ops.empty()) return steps_.launch(ops, stream);
  const uint64_t number = log_.add(ops);
  const auto& api = module_.api();
  module_.check(api.writeValue64(stream, log_.word(), 2 * number - 1),
                "marking a domain step entered");
  steps_.launch(ops, stream);
  module_.check(api.writeValue64(stream, log_.word(), 2 * number),
                "marking a domain step passed");
}

}  // namespace hetccl
