#include "cluster.h"

#include <sstream>

#include "algo/plan_cost.h"

namespace hetccl::sim {

// The cost model's defaults (algo/plan_cost.h), so that the simulator and
// the plans' choice start from the same figures.
bool libraryModel(const std::string& name, LibraryModel* model) {
  RuntimeKind runtime;
  if (name == "nccl")
    runtime = RuntimeKind::Cuda;
  else if (name == "rccl")
    runtime = RuntimeKind::Hip;
  else if (name == "host")
    runtime = RuntimeKind::Host;
  else
    return false;
  const LibraryCost cost = defaultLibraryCost(runtime);
  *model = {name, cost.busGbps, cost.alphaUs, defaultMemoryGbps(runtime)};
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
