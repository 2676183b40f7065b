#include "core/stall_report.h"

#include "util/error.h"
#include "util/log.h"

namespace hetccl {

StallReport::StallReport(int rank, double warnSeconds,
                         std::shared_ptr<const WaitDescription> names,
                         std::shared_ptr<const CallLog> calls)
    : rank_(rank),
      warnSeconds_(warnSeconds),
      names_(std::move(names)),
      calls_(std::move(calls)) {}

std::optional<std::string> StallReport::check(const WaitingCall& waiting,
                                              const RelayedWaits* relayed) {
  if (warnSeconds_ <= 0) return std::nullopt;
  const std::optional<WaitingCall::Stall> stall =
      waiting.stalledFor(warnSeconds_);
  if (!stall) {
    reported_.reset();
    return std::nullopt;
  }
  if (!reported_ || reported_->sequence != stall->sequence ||
      reported_->peer != stall->peer) {
    reported_ = stall;
    nextWarnSeconds_ = warnSeconds_;
  }
  if (stall->seconds < nextWarnSeconds_) return std::nullopt;
  std::string chain;
  if (relayed) {
    const auto found = relayed->find(stall->peer);
    if (found != relayed->end() && !found->second.chain.empty())
      chain = "; " + names_->relayed(found->second);
  }
  const std::string line = format(
      "rank %d: %s has waited %.0f s for %s %s%s; it waits until that rank "
      "takes part (a stopped, hung or slower peer, or one waiting for "
      "another rank), or fails after HETCCL_TIMEOUT if that is set",
      rank_, describeOp(stall->sequence).c_str(), stall->seconds,
      names_->waitedFor(*stall).c_str(), names_->leg(*stall).c_str(),
      chain.c_str());
  LOG_WARN(kLogColl, "%s", line.c_str());
  nextWarnSeconds_ = 2 * stall->seconds;
  return line;
}

std::string StallReport::describeOp(uint64_t sequence) const {
  if (sequence == 0) return "a send or receive";
  const std::optional<CallSignature> call =
      calls_ ? calls_->find(sequence) : std::nullopt;
  const std::string number =
      format("op #%llu", static_cast<unsigned long long>(sequence));
  return call ? number + " " + describeCall(*call) : number;
}

}  // namespace hetccl
