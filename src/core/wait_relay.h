// The call probe's relay of waits (core/call_probe.h): chains of waits
// name the rank at their end. Rank A waits for rank B, which is alive but
// waits itself for rank C, stopped: A's stall line alone would blame B.
// When A's probe asks B about its call (kWaiting), B remembers A as an
// asker; while B's own wait for a rank other than A lasts kStallSeconds or
// more, B tells A (kWaitsFor) whom it waits for, where, and what it heard
// the same way from that rank in turn, so a chain resolves hop by hop. B
// says it again only when the chain changes, and once more (an empty
// chain) when it stops waiting or has gone past A's call: one small
// message per change and asker, nothing while no one asked or B waits for
// nobody. The relay is pure bookkeeping, the bytes and whom to send them;
// the probe sends them, under its handling mutex.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "core/wait_description.h"
#include "op/waiting_call.h"

namespace hetccl {

class WaitRelay {
 public:
  // At most this many ranks in a chain, and bytes of a leg's words.
  static constexpr size_t kMaxChain = 8;
  static constexpr size_t kMaxLegBytes = 240;

  // A message to send: to whom, the body (after the message kind).
  using Answer = std::pair<int, std::vector<uint8_t>>;

  WaitRelay(int rank, int nranks) : rank_(rank), nranks_(nranks) {}

  // `peer` asked about its call `sequence`: it waits for this rank.
  void asked(int peer, uint64_t sequence);
  // `peer` said what it waits for (a kWaitsFor body); a malformed body is
  // ignored.
  void heard(int peer, const std::vector<uint8_t>& body);
  // What to tell the askers now. `own`: this rank's wait, if it has lasted
  // long enough to be worth telling; `latestCall`: the latest call this
  // rank made; `names`: how to word the leg.
  std::vector<Answer> answers(const std::optional<WaitingCall::Stall>& own,
                              uint64_t latestCall,
                              const WaitDescription& names);
  // What the peers said they wait for, by peer.
  const RelayedWaits& relayed() const { return relayed_; }

  static std::vector<uint8_t> encode(uint64_t sequence,
                                     const std::vector<int>& chain,
                                     const std::string& leg);
  static std::optional<RelayedWait> decode(int from,
                                           const std::vector<uint8_t>& body);

 private:
  // The chain to tell `asker`, given this rank's own: cut at this rank, the
  // asker or a rank seen before; empty when it starts at the asker.
  std::vector<int> chainFor(int asker, const std::vector<int>& own) const;

  const int rank_;
  const int nranks_;
  std::map<int, uint64_t> askers_;        // the call each asked about
  std::map<int, std::vector<int>> told_;  // the chain each was told last
  RelayedWaits relayed_;
};

}  // namespace hetccl
