#include "cluster.h"

#include <sstream>

namespace hetccl::sim {

bool libraryModel(const std::string& name, LibraryModel* model) {
  // nccl-tests reports 360-480 GB/s all-reduce bus bandwidth on 8 H100
  // SXM; rccl-tests 250-310 GB/s on 8 MI300X; HBM3 moves 2-3 TB/s. The
  // host collectives: one host's shared memory, a few GB/s per rank pair.
  if (name == "nccl") {
    *model = {name, 360, 10, 2000};
  } else if (name == "rccl") {
    *model = {name, 250, 15, 2000};
  } else if (name == "host") {
    *model = {name, 10, 5, 10};
  } else {
    return false;
  }
  return true;
}

int ClusterSpec::nranks() const {
  int n = 0;
  for (const DomainSpec& d : domains) n += d.hosts * d.ranksPerHost;
  return n;
}

int ClusterSpec::nhosts() const {
  int n = 0;
  for (const DomainSpec& d : domains) n += d.hosts;
  return n;
}

std::vector<RankPlace> placeRanks(const ClusterSpec& cluster) {
  std::vector<RankPlace> places;
  int host = 0;
  for (int d = 0; d < static_cast<int>(cluster.domains.size()); ++d) {
    const DomainSpec& domain = cluster.domains[d];
    int domainRank = 0;
    for (int h = 0; h < domain.hosts; ++h, ++host)
      for (int local = 0; local < domain.ranksPerHost; ++local)
        places.push_back({d, host, local, domainRank++});
  }
  return places;
}

std::string describe(const ClusterSpec& cluster) {
  std::ostringstream out;
  for (size_t d = 0; d < cluster.domains.size(); ++d) {
    const DomainSpec& domain = cluster.domains[d];
    out << (d ? " + " : "") << domain.library.name << " " << domain.hosts << "x"
        << domain.ranksPerHost;
  }
  out << " (" << cluster.nranks() << " ranks, " << cluster.nhosts()
      << " hosts), " << cluster.nics.perHost << " x " << cluster.nics.gbps
      << " Gb/s NICs per host";
  return out.str();
}

}  // namespace hetccl::sim
