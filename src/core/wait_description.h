// How the stall reports and the status files name a wait: the rank waited
// for (its domain, host and pid), the leg it is on (a link and its
// transport, or a step of the domain's back-end), how far the transfer
// got, the GPU engine's stage, and the latest call the peer's transfers
// showed this rank; and what a waited-for peer said it waits for itself
// (the call probe's relay, core/call_probe.h).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "op/waiting_call.h"

namespace hetccl {

// What a peer this rank waits for said it waits for itself (the call
// probe's kWaitsFor): a chain of waits, so that a rank that waits for a
// live rank names the one at the end, the stopped or hung one.
struct RelayedWait {
  int from = -1;          // the peer that said it
  uint64_t sequence = 0;  // the call its own wait is in (0: send/receive)
  // The rank `from` waits for, then whom that one waits for, and so on:
  // never empty, no rank twice, neither `from` nor this rank.
  std::vector<int> chain;
  std::string leg;  // where `from` waits for chain.front(), in its words
};
// The latest relayed wait of each peer that sent one, by that peer.
using RelayedWaits = std::map<int, RelayedWait>;

class WaitDescription {
 public:
  struct Peer {
    std::string who;   // "rank 6 (domain 1, host nodeB, pid 42)"
    int domain = -1;   // its domain's index
    std::string link;  // its link's transport ("tcp"); "" in this domain
  };
  // `peers`: by rank. `backend`: this rank's domain back-end ("host
  // collectives", "NCCL"). `latestCallFrom` (may be empty): a peer's
  // latest collective number seen on its link (Link::latestCallFrom).
  WaitDescription(int domain, std::string backend, std::vector<Peer> peers,
                  std::function<uint64_t(int)> latestCallFrom);

  // "rank 6 (domain 1, host nodeB, pid 42)"; "a rank of another domain"
  // when unknown.
  std::string peer(int rank) const;
  // Whom `stall` waits for: peer(stall.peer), or "a rank of domain 0" for
  // a wait inside the domain for any of several.
  std::string waitedFor(const WaitingCall::Stall& stall) const;
  // Where `stall` waits and how far it got: "on its tcp link: 2 of 4
  // pieces received; the staged GPU engine's stage: network; the latest
  // transfer from rank 6 here belonged to op #41", "inside domain 0's
  // host collectives, waiting for its broadcast data", or, where the GPU
  // engine's stream has not got past a domain step, "inside domain 0's
  // NCCL, in its reduceScatter (step 1 of 3)".
  std::string leg(const WaitingCall::Stall& stall) const;
  // "rank 0 itself waits for rank 1 (domain 0, host X, pid 9) inside
  // domain 0's host collectives", then "; rank 1 in turn waits for ..."
  // for each further rank of the chain.
  std::string relayed(const RelayedWait& relayed) const;

 private:
  std::string onLink(const WaitingCall::Stall& stall) const;

  const int domain_;
  const std::string backend_;
  const std::vector<Peer> peers_;
  const std::function<uint64_t(int)> latestCallFrom_;
};

}  // namespace hetccl
