#include "op/decision_log.h"

#include <cctype>

#include "op/op_traits.h"
#include "util/dtype.h"
#include "util/log.h"
#include "util/params.h"

namespace hetccl {
namespace {

// NCCL's function name without its prefix, as the call descriptions
// spell it: "allReduce".
std::string callName(OpKind kind) {
  std::string name = opKindName(kind);
  name[0] = static_cast<char>(std::tolower(name[0]));
  return name;
}

}  // namespace

DecisionLog::DecisionLog(int rank, std::string about)
    : rank_(rank), about_(std::move(about)) {
  for (auto& classes : logged_) classes.store(0, std::memory_order_relaxed);
}

unsigned DecisionLog::sizeClass(size_t bytes) {
  if (bytes <= 1) return 0;
  const unsigned exponent = 64 - __builtin_clzll(bytes - 1);
  return exponent < 63 ? exponent : 63;
}

// The atomic load settles every op after the first of its class; the
// level is asked only then, so a line is not lost to a log enabled later.
bool DecisionLog::claim(const Op& op) {
  const uint64_t bit = uint64_t{1} << sizeClass(op.count * dtypeSize(op.dtype));
  std::atomic<uint64_t>& logged = logged_[static_cast<size_t>(op.kind)];
  if (logged.load(std::memory_order_relaxed) & bit) return false;
  if (!logEnabled(LogLevel::Info, kLogTuning)) return false;
  return (logged.fetch_or(bit, std::memory_order_relaxed) & bit) == 0;
}

void DecisionLog::write(const Op& op, const std::string& why) const {
  LOG_INFO(kLogTuning, "rank %d: %s of %s (%s): %s%s%s", rank_,
           callName(op.kind).c_str(),
           bytesText(op.count * dtypeSize(op.dtype)).c_str(),
           dtypeName(op.dtype), why.c_str(), about_.empty() ? "" : "; ",
           about_.c_str());
}

std::string bytesText(size_t bytes) {
  return sizeText(static_cast<int64_t>(bytes)) + " bytes";
}

}  // namespace hetccl
