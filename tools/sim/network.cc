#include "network.h"

#include <algorithm>

#include "algo/pieced_link.h"

namespace hetccl::sim {

namespace {

constexpr double kFabricLatencySeconds = 2e-6;

}  // namespace

Network::Network(const ClusterSpec& cluster, std::vector<RankPlace> places,
                 size_t largestPieceBytes)
    : places_(std::move(places)),
      nicsPerHost_(cluster.nics.perHost),
      nicLatency_(cluster.nics.latencyUs * 1e-6),
      largestPieceBytes_(largestPieceBytes),
      pieceSeconds_(cluster.pieceUs * 1e-6) {
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
  auto add = [this](const std::string& name, double rate) {
    resources_.push_back({name, rate});
    return static_cast<int>(resources_.size()) - 1;
  };
  for (size_t rank = 0; rank < places_.size(); ++rank) {
    const LibraryModel& library = cluster.domains[places_[rank].domain].library;
    const std::string prefix = "rank " + std::to_string(rank);
    const double rate = library.busGBps * 1e9;
    fabricOut_.push_back(add(prefix + " fabric out", rate));
    fabricIn_.push_back(add(prefix + " fabric in", rate));
    fabricLatency_.push_back(kFabricLatencySeconds);
    const bool staged = library.name != "host";
    copyOut_.push_back(
        staged ? add(prefix + " copy out", cluster.copyGBps * 1e9) : -1);
    copyIn_.push_back(staged ? add(prefix + " copy in", cluster.copyGBps * 1e9)
                             : -1);
  }
}

int Network::nicSend(int rank) const {
  const RankPlace& place = places_[rank];
  return firstNic_[place.host] + place.localIndex % nicsPerHost_;
}

int Network::nicReceive(int rank) const { return nicSend(rank) + nicsPerHost_; }

std::vector<int> Network::pathBetween(int src, int dst) const {
  if (places_[src].host == places_[dst].host)
    return {fabricOut_[src], fabricIn_[dst]};
  if (loopback_ >= 0) return {loopback_};
  return {nicSend(src), nicReceive(dst)};
}

double Network::reserve(const std::vector<int>& path, size_t bytes,
                        double earliest, double seconds) {
  double start = earliest;
  double rate = resources_[path[0]].bytesPerSecond;
  for (int r : path) {
    start = std::max(start, resources_[r].freeAt);
    rate = std::min(rate, resources_[r].bytesPerSecond);
  }
  seconds = std::max(seconds, static_cast<double>(bytes) / rate);
  for (int r : path) {
    Resource& resource = resources_[r];
    resource.freeAt = start + seconds;
    resource.busySeconds += seconds;
    resource.bytes += bytes;
    ++resource.transfers;
  }
  return start + seconds;
}

double Network::transfer(int src, int dst, size_t bytes, double now) {
  const bool sameHost = places_[src].host == places_[dst].host;
  const double latency = sameHost ? fabricLatency_[src] : nicLatency_;
  const std::vector<int> wire = pathBetween(src, dst);
  const bool out = !sameHost && copyOut_[src] >= 0;
  const bool in = !sameHost && copyIn_[dst] >= 0;
  if (!out && !in) return reserve(wire, bytes, now, 0) + latency;
  // Staged: the wire starts once the first piece is out of the GPU and
  // ends no sooner than the last one is; the receiver's copy engine takes
  // each piece as it arrives and ends a piece after the wire.
  const size_t piece = PiecedLink::pieceBytesFor(largestPieceBytes_, bytes);
  const size_t pieces = (bytes + piece - 1) / piece;
  double wireFrom = now;
  double copiedOut = now;
  if (out) {
    const double copyStart = std::max(now, resources_[copyOut_[src]].freeAt);
    copiedOut = reserve({copyOut_[src]}, bytes, copyStart, 0);
    wireFrom = copyStart + static_cast<double>(piece) /
                               resources_[copyOut_[src]].bytesPerSecond;
  }
  double wireStart = wireFrom;
  for (int r : wire) wireStart = std::max(wireStart, resources_[r].freeAt);
  double arrived =
      reserve(wire, bytes, wireFrom,
              std::max(pieces * pieceSeconds_, copiedOut - wireStart)) +
      latency;
  if (!in) return arrived;
  const double lastPiece = static_cast<double>(std::min(piece, bytes)) /
                           resources_[copyIn_[dst]].bytesPerSecond;
  const double copiedIn = reserve({copyIn_[dst]}, bytes, wireStart, 0);
  return std::max(arrived + lastPiece, copiedIn);
}

}  // namespace hetccl::sim
