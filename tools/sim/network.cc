#include "network.h"

#include <algorithm>

#include "algo/pieced_link.h"

namespace hetccl::sim {

namespace {

constexpr double kFabricLatencySeconds = 2e-6;

}  // namespace

double Resource::freeFrom(double from, double seconds) const {
  double start = from;
  auto span = std::lower_bound(busy.begin(), busy.end(), start,
                               [](const std::pair<double, double>& s,
                                  double t) { return s.second <= t; });
  for (; span != busy.end() && span->first < start + seconds; ++span)
    start = std::max(start, span->second);
  return start;
}

void Resource::occupy(double start, double seconds) {
  const std::pair<double, double> span{start, start + seconds};
  busy.insert(std::upper_bound(busy.begin(), busy.end(), span), span);
  busySeconds += seconds;
}

void Resource::forgetBefore(double now) {
  auto kept = std::find_if(
      busy.begin(), busy.end(),
      [now](const std::pair<double, double>& s) { return s.second >= now; });
  busy.erase(busy.begin(), kept);
}

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
                              nicRate,
                              {}});
  }
  if (cluster.loopbackGBps > 0) {
    loopback_ = static_cast<int>(resources_.size());
    resources_.push_back({"loopback", cluster.loopbackGBps * 1e9, {}});
  }
  auto add = [this](const std::string& name, double rate) {
    resources_.push_back({name, rate, {}});
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

double Network::freeFrom(const std::vector<int>& path, double from,
                         double seconds) const {
  // Each resource's earliest fit from the latest found so far, until all
  // agree: every step moves the start past a reserved span.
  double start = from;
  for (bool moved = true; moved;) {
    moved = false;
    for (int r : path) {
      const double fit = resources_[r].freeFrom(start, seconds);
      moved = moved || fit > start;
      start = fit;
    }
  }
  return start;
}

void Network::occupy(const std::vector<int>& path, size_t bytes, double start,
                     double seconds) {
  for (int r : path) {
    Resource& resource = resources_[r];
    resource.occupy(start, seconds);
    resource.bytes += bytes;
    ++resource.transfers;
  }
}

double Network::reserve(const std::vector<int>& path, size_t bytes,
                        double earliest, double seconds) {
  double rate = resources_[path[0]].bytesPerSecond;
  for (int r : path) rate = std::min(rate, resources_[r].bytesPerSecond);
  seconds = std::max(seconds, static_cast<double>(bytes) / rate);
  const double start = freeFrom(path, earliest, seconds);
  occupy(path, bytes, start, seconds);
  return start + seconds;
}

double Network::transfer(int src, int dst, size_t bytes, double now,
                         StagedEnds staged) {
  const bool sameHost = places_[src].host == places_[dst].host;
  const double latency = sameHost ? fabricLatency_[src] : nicLatency_;
  const std::vector<int> wire = pathBetween(src, dst);
  const bool out = staged.out && !sameHost && copyOut_[src] >= 0;
  const bool in = staged.in && !sameHost && copyIn_[dst] >= 0;
  for (int r : wire) resources_[r].forgetBefore(now);
  if (out) resources_[copyOut_[src]].forgetBefore(now);
  if (in) resources_[copyIn_[dst]].forgetBefore(now);
  if (!out && !in) return reserve(wire, bytes, now, 0) + latency;
  // Staged: the wire starts once the first piece is out of the GPU and
  // ends no sooner than the last one is; the receiver's copy engine takes
  // each piece as it arrives and ends a piece after the wire.
  const size_t piece = PiecedLink::pieceBytesFor(largestPieceBytes_, bytes);
  const size_t pieces = (bytes + piece - 1) / piece;
  double wireFrom = now;
  double copiedOut = now;
  if (out) {
    const Resource& copy = resources_[copyOut_[src]];
    const double copyStart =
        copy.freeFrom(now, static_cast<double>(bytes) / copy.bytesPerSecond);
    copiedOut = reserve({copyOut_[src]}, bytes, copyStart, 0);
    wireFrom = copyStart + static_cast<double>(piece) / copy.bytesPerSecond;
  }
  double wireRate = resources_[wire[0]].bytesPerSecond;
  for (int r : wire)
    wireRate = std::min(wireRate, resources_[r].bytesPerSecond);
  const double fastest =
      std::max(static_cast<double>(bytes) / wireRate, pieces * pieceSeconds_);
  // Starting later, the wire need not wait as long for the copy out.
  const double wireStart =
      freeFrom(wire, wireFrom, std::max(fastest, copiedOut - wireFrom));
  const double wireSeconds = std::max(fastest, copiedOut - wireStart);
  occupy(wire, bytes, wireStart, wireSeconds);
  const double arrived = wireStart + wireSeconds + latency;
  if (!in) return arrived;
  const double lastPiece = static_cast<double>(std::min(piece, bytes)) /
                           resources_[copyIn_[dst]].bytesPerSecond;
  const double copiedIn = reserve({copyIn_[dst]}, bytes, wireStart, 0);
  return std::max(arrived + lastPiece, copiedIn);
}

}  // namespace hetccl::sim
