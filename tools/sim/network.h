// The links of a simulated cluster as resources that carry one transfer at
// a time at their rate: each NIC's send side and receive side, and each
// rank's own way into its host's fabric (NVLink, xGMI, shared memory) for
// transfers between ranks of one host. A transfer reserves every resource
// on its path from the time all of them are free, for bytes / the slowest
// rate, and is complete a latency later. Transfers that share a NIC
// therefore take turns: the NIC's total rate is what they share. Pretend
// hosts (ClusterSpec::loopbackGBps) share one loopback instead of NICs.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "cluster.h"

namespace hetccl::sim {

struct Resource {
  std::string name;
  double bytesPerSecond = 0;
  double freeAt = 0;
  double busySeconds = 0;
  size_t bytes = 0;
  size_t transfers = 0;
};

class Network {
 public:
  Network(const ClusterSpec& cluster, std::vector<RankPlace> places);

  // When a transfer of `bytes` from rank `src` to rank `dst`, which can
  // start at `now`, is complete. Reserves the resources it takes.
  double transfer(int src, int dst, size_t bytes, double now);
  const std::vector<Resource>& resources() const { return resources_; }

 private:
  int nicSend(int rank) const;
  int nicReceive(int rank) const;

  std::vector<RankPlace> places_;
  int nicsPerHost_;
  double nicLatency_;
  std::vector<Resource> resources_;
  // Resource indices: a host's NICs' send sides, receive sides; a rank's
  // way out of and into its host's fabric.
  std::vector<int> firstNic_;  // per host: send sides, then receive sides
  std::vector<int> fabricOut_, fabricIn_;  // per rank
  std::vector<double> fabricLatency_;      // per rank
  int loopback_ = -1;  // the one resource between hosts, if they pretend
};

}  // namespace hetccl::sim
