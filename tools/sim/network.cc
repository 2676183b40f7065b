#include "network.h"

#include <algorithm>

namespace hetccl::sim {

namespace {

constexpr double kFabricLatencySeconds = 2e-6;

}  // namespace

Network::Network(const ClusterSpec& cluster, std::vector<RankPlace> places)
    : places_(std::move(places)),
      nicsPerHost_(cluster.nics.perHost),
      nicLatency_(cluster.nics.latencyUs * 1e-6) {
  const double nicRate = cluster.nics.gbps * 1e9 / 8;
  for (int host = 0; host < cluster.nhosts(); ++host) {
    firstNic_.push_back(static_cast<int>(resources_.size()));
    for (const char* side : {"send", "receive"})
      for (int nic = 0; nic < nicsPerHost_; ++nic)
        resources_.push_back({"host " + std::to_string(host) + " NIC " +
                                  std::to_string(nic) + " " + side,
                              nicRate});
  }
  if (cluster.loopbackGBps > 0) {
    loopback_ = static_cast<int>(resources_.size());
    resources_.push_back({"loopback", cluster.loopbackGBps * 1e9});
  }
  for (size_t rank = 0; rank < places_.size(); ++rank) {
    const LibraryModel& library = cluster.domains[places_[rank].domain].library;
    const double rate = library.busGBps * 1e9;
    fabricOut_.push_back(static_cast<int>(resources_.size()));
    resources_.push_back(
        {"rank " + std::to_string(rank) + " fabric out", rate});
    fabricIn_.push_back(static_cast<int>(resources_.size()));
    resources_.push_back({"rank " + std::to_string(rank) + " fabric in", rate});
    fabricLatency_.push_back(kFabricLatencySeconds);
  }
}

int Network::nicSend(int rank) const {
  const RankPlace& place = places_[rank];
  return firstNic_[place.host] + place.localIndex % nicsPerHost_;
}

int Network::nicReceive(int rank) const { return nicSend(rank) + nicsPerHost_; }

double Network::transfer(int src, int dst, size_t bytes, double now) {
  const bool sameHost = places_[src].host == places_[dst].host;
  std::vector<int> path;
  if (sameHost)
    path = {fabricOut_[src], fabricIn_[dst]};
  else if (loopback_ >= 0)
    path = {loopback_};
  else
    path = {nicSend(src), nicReceive(dst)};
  const double latency = sameHost ? fabricLatency_[src] : nicLatency_;
  double start = now;
  double rate = resources_[path[0]].bytesPerSecond;
  for (int r : path) {
    start = std::max(start, resources_[r].freeAt);
    rate = std::min(rate, resources_[r].bytesPerSecond);
  }
  const double seconds = static_cast<double>(bytes) / rate;
  for (int r : path) {
    Resource& resource = resources_[r];
    resource.freeAt = start + seconds;
    resource.busySeconds += seconds;
    resource.bytes += bytes;
    ++resource.transfers;
  }
  return start + seconds + latency;
}

}  // namespace hetccl::sim
