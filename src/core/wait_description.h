// How the stall reports and the status files name a wait: the rank waited
// for (its domain, host and pid), the leg it is on (a link and its
// transport, or a step of the domain's back-end), how far the transfer
// got, the GPU engine's stage, and the latest call the peer's transfers
// showed this rank.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "op/waiting_call.h"

namespace hetccl {

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
  // transfer from rank 6 here belonged to op #41", or "inside domain 0's
  // host collectives, waiting for its broadcast data".
  std::string leg(const WaitingCall::Stall& stall) const;

 private:
  std::string onLink(const WaitingCall::Stall& stall) const;

  const int domain_;
  const std::string backend_;
  const std::vector<Peer> peers_;
  const std::function<uint64_t(int)> latestCallFrom_;
};

}  // namespace hetccl
