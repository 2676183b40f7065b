// A simulated domain's own library (NCCL, RCCL, the host collectives): the
// Executor each rank's plans hand their domain steps to. A collective
// completes for all the domain's ranks once the last of them has launched
// it, its time given by the library's alpha-beta model (a group of
// collectives: one alpha and the sum of their bus bytes); sends and
// receives inside the domain go over the network's fabric (or NICs, in a
// domain of several hosts) like any transfer.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "cluster.h"
#include "op/executor.h"
#include "scheduler.h"
#include "sim_link.h"
#include "sim_stream.h"

namespace hetccl::sim {

// The time one collective takes in a domain of `ranks` ranks: alpha plus
// the bus factor of a ring times the bytes over the bus bandwidth (which
// a domain of several hosts also bounds by each rank's share of its
// host's NICs); in a domain of one rank, alpha plus the copy of an
// out-of-place input at the rank's memory rate.
double domainCollectiveSeconds(const Op& op, int ranks,
                               const LibraryModel& library,
                               double busBytesPerSecond);

class DomainLibrary {
 public:
  DomainLibrary(Scheduler& scheduler, Wires& wires, const ClusterSpec& cluster,
                int domain, std::vector<int> members);

  // What a launch of ops takes: its collectives' time, which starts once
  // every rank of the domain has launched them, and its point-to-point
  // transfers. Small, so that a GPU rank's stream can hold many.
  struct Launch {
    bool collectives = false;
    double seconds = 0;
    struct Transfer {
      int peer;  // a local rank
      TransferWay way;
      size_t bytes;
    };
    std::vector<Transfer> transfers;
  };
  Launch describe(const std::vector<Op>& ops) const;

  // Rank `rank`'s `index`-th launch of collectives (p2p ops aside); waits
  // in virtual time until it is complete.
  void launch(int rank, uint64_t index, const Launch& launch);
  // Seconds its collectives took, from the last rank's launch to the end.
  double busySeconds() const { return busySeconds_; }

 private:
  struct Gathering {
    int arrived = 0;
    bool complete = false;
    std::vector<int> waiters;
  };

  Scheduler& scheduler_;
  Wires& wires_;
  const LibraryModel library_;
  const std::vector<int> members_;
  double busBytesPerSecond_;
  std::map<uint64_t, Gathering> gatherings_;
  double busySeconds_ = 0;
};

// One rank's view of its domain library.
class SimExecutor : public Executor {
 public:
  // `stream`: a GPU rank's (its launches run there), null for a CPU rank.
  SimExecutor(DomainLibrary& library, int rank, SimStream* stream)
      : library_(library), rank_(rank), stream_(stream) {}
  void launch(const std::vector<Op>& ops, StreamHandle stream) override;
  bool drain(double) override { return true; }

 private:
  DomainLibrary& library_;
  const int rank_;
  SimStream* const stream_;
  uint64_t collectiveLaunches_ = 0;
};

}  // namespace hetccl::sim
