#include "core/wait_description.h"

#include "util/error.h"

namespace hetccl {

WaitDescription::WaitDescription(int domain, std::string backend,
                                 std::vector<Peer> peers,
                                 std::function<uint64_t(int)> latestCallFrom)
    : domain_(domain),
      backend_(std::move(backend)),
      peers_(std::move(peers)),
      latestCallFrom_(std::move(latestCallFrom)) {}

std::string WaitDescription::peer(int rank) const {
  if (rank < 0 || rank >= static_cast<int>(peers_.size()) ||
      peers_[rank].who.empty())
    return "a rank of another domain";
  return peers_[rank].who;
}

std::string WaitDescription::waitedFor(const WaitingCall::Stall& stall) const {
  if (stall.peer < 0 && stall.leg.kind == WaitLeg::Kind::kDomain)
    return format("a rank of domain %d", domain_);
  return peer(stall.peer);
}

std::string WaitDescription::leg(const WaitingCall::Stall& stall) const {
  if (stall.leg.kind == WaitLeg::Kind::kDomain) {
    std::string text =
        format("inside domain %d's %s", domain_, backend_.c_str());
    // A step may name its owner already ("its input of a collective").
    const char* step = stall.leg.step;
    if (step && stall.leg.stepIndex > 0) {
      // The GPU engine's stream has not got past a vendor-library call.
      text += format(", in its %s (step %u", step,
                     static_cast<unsigned>(stall.leg.stepIndex));
      if (stall.leg.stepCount > 0)
        text += format(" of %u", static_cast<unsigned>(stall.leg.stepCount));
      return text + ")";
    }
    if (step)
      text +=
          format(", waiting for %s%s",
                 std::string(step).rfind("its ", 0) == 0 ? "" : "its ", step);
    return text;
  }
  return onLink(stall);
}

std::string WaitDescription::relayed(const RelayedWait& relayed) const {
  if (relayed.chain.empty()) return "";
  std::string text = format("rank %d itself waits for %s", relayed.from,
                            peer(relayed.chain.front()).c_str());
  if (!relayed.leg.empty()) text += " " + relayed.leg;
  for (size_t i = 1; i < relayed.chain.size(); ++i)
    text += format("; rank %d in turn waits for %s", relayed.chain[i - 1],
                   peer(relayed.chain[i]).c_str());
  return text;
}

std::string WaitDescription::onLink(const WaitingCall::Stall& stall) const {
  const bool known =
      stall.peer >= 0 && stall.peer < static_cast<int>(peers_.size());
  std::string text =
      known && !peers_[stall.peer].link.empty()
          ? format("on its %s link", peers_[stall.peer].link.c_str())
          : std::string("on its link");
  const WaitLeg& leg = stall.leg;
  if (leg.pieces.total > 0) {
    const char* done = leg.way == TransferWay::kSend      ? "sent"
                       : leg.way == TransferWay::kReceive ? "received"
                                                          : "done";
    text +=
        format(": %u of %u pieces %s", leg.pieces.done, leg.pieces.total, done);
  }
  if (leg.stage != EngineStage::kNone)
    text += format("; the staged GPU engine's stage: %s",
                   engineStageName(leg.stage));
  const uint64_t latest =
      known && latestCallFrom_ ? latestCallFrom_(stall.peer) : 0;
  if (latest > 0)
    text += format(
        "; the latest transfer from rank %d here belonged to op "
        "#%llu",
        stall.peer, static_cast<unsigned long long>(latest));
  return text;
}

}  // namespace hetccl
