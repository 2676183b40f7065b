// The links of a simulated cluster as resources that carry one transfer at
// a time at their rate: each NIC's send side and receive side, and each
// rank's own way into its host's fabric (NVLink, xGMI, shared memory) for
// transfers between ranks of one host. A transfer reserves every resource
// on its path for bytes / the slowest rate, from the earliest time all of
// them are free together for that long, and is complete a latency later.
// Transfers that share a NIC therefore take turns: the NIC's total rate is
// what they share. A later transfer may take a gap that an earlier one
// left (a NIC idle while the transfer queued on it waits for its
// receiver), as a packet network's links carry whatever is ready. Pretend
// hosts (ClusterSpec::loopbackGBps) share one loopback instead of NICs.
// A GPU rank's transfer between hosts through HetCCL's links is staged:
// its GPU copies it out to host memory (and the receiving GPU back in)
// piece by piece at ClusterSpec::copyGBps, so the wire waits for the
// first piece's copy and the receiver for the last one's, each copy
// engine carries one transfer at a time, and the wire moves at most a
// piece per ClusterSpec::pieceUs.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "cluster.h"

namespace hetccl::sim {

// Which ends of a transfer between hosts copy it through host memory: a
// GPU rank's staged engine does; a CPU rank, and a GPU domain's own
// library (GPUDirect RDMA), do not.
struct StagedEnds {
  bool out = false;
  bool in = false;
};

struct Resource {
  std::string name;
  double bytesPerSecond = 0;
  // Reserved [start, end) spans, in order, none ending before the clock.
  std::vector<std::pair<double, double>> busy;
  double busySeconds = 0;
  size_t bytes = 0;
  size_t transfers = 0;

  // The earliest start from `from` on of a span of `seconds` that is free.
  double freeFrom(double from, double seconds) const;
  void occupy(double start, double seconds);
  // Forgets spans that end before `now` (the clock never goes back).
  void forgetBefore(double now);
};

class Network {
 public:
  // largestPieceBytes: the links' largest piece (HETCCL_CHUNK / 4).
  Network(const ClusterSpec& cluster, std::vector<RankPlace> places,
          size_t largestPieceBytes);

  // When a transfer of `bytes` from rank `src` to rank `dst`, which can
  // start at `now`, is complete. Reserves the resources it takes.
  double transfer(int src, int dst, size_t bytes, double now,
                  StagedEnds staged = {});
  const std::vector<Resource>& resources() const { return resources_; }

 private:
  int nicSend(int rank) const;
  int nicReceive(int rank) const;
  // The wire's resources between two ranks, and its latency.
  std::vector<int> pathBetween(int src, int dst) const;
  // Reserves `path` for `bytes` from `earliest` at `seconds` at least;
  // returns when it is free again.
  double reserve(const std::vector<int>& path, size_t bytes, double earliest,
                 double seconds);
  // The earliest start from `from` on when all of `path` is free for
  // `seconds`.
  double freeFrom(const std::vector<int>& path, double from,
                  double seconds) const;
  void occupy(const std::vector<int>& path, size_t bytes, double start,
              double seconds);

  std::vector<RankPlace> places_;
  int nicsPerHost_;
  double nicLatency_;
  std::vector<Resource> resources_;
  // Resource indices: a host's NICs' send sides, receive sides; a rank's
  // way out of and into its host's fabric.
  std::vector<int> firstNic_;  // per host: send sides, then receive sides
  std::vector<int> fabricOut_, fabricIn_;  // per rank
  std::vector<double> fabricLatency_;      // per rank
  // Per rank, its GPU's copy engines out of and into host memory (-1 for
  // a CPU rank: nothing staged).
  std::vector<int> copyOut_, copyIn_;
  size_t largestPieceBytes_;
  double pieceSeconds_;
  int loopback_ = -1;  // the one resource between hosts, if they pretend
};

}  // namespace hetccl::sim
