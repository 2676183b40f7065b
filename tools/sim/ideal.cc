#include "ideal.h"

#include <algorithm>
#include <vector>

#include "domain_model.h"
#include "util/dtype.h"

namespace hetccl::sim {
namespace {

// The domain's own share of the operation, as one collective of its
// library (the time domainCollectiveSeconds gives it).
Op domainShare(const OpSpec& spec, int domainRanks, int nranks) {
  Op op;
  op.dtype = spec.dtype;
  const size_t elements = spec.bytes / dtypeSize(spec.dtype);
  op.sendbuff = &op;
  op.recvbuff = &op;  // in place: no copy in a domain of one rank
  switch (spec.collective) {
    case SimCollective::AllReduce:
      op.kind = OpKind::AllReduce;
      op.count = elements;
      break;
    case SimCollective::AllGather:
      // Every rank ends with all S bytes: a gather of S / n per rank.
      op.kind = OpKind::AllGather;
      op.count = elements / domainRanks;
      break;
    case SimCollective::ReduceScatter:
      op.kind = OpKind::ReduceScatter;
      op.count = elements / domainRanks;
      break;
    case SimCollective::Broadcast:
      op.kind = OpKind::Broadcast;
      op.count = elements;
      break;
    case SimCollective::Reduce:
      op.kind = OpKind::Reduce;
      op.count = elements;
      break;
    case SimCollective::AlltoAll:
      op.kind = OpKind::AlltoAll;
      op.count = elements / nranks;
      break;
    case SimCollective::SendRecv:  // a ring uses no library: not asked
      op.kind = OpKind::Send;
      break;
  }
  return op;
}

// The bytes that must leave and enter a domain of `n` ranks.
struct Crossing {
  double out = 0;
  double in = 0;
};

Crossing crossingBytes(const OpSpec& op, double n, double nranks,
                       double domains, bool rootsDomain) {
  const double s = static_cast<double>(op.bytes);
  const double others = domains - 1;
  const double theirs = s * (nranks - n) / nranks;  // other ranks' share
  const double ours = s * n / nranks * others;      // our share, to each other
  switch (op.collective) {
    case SimCollective::AllReduce:
      return {2 * others / domains * s, 2 * others / domains * s};
    case SimCollective::AllGather:
      return {ours, theirs};
    case SimCollective::ReduceScatter:
      return {theirs, ours};
    case SimCollective::Broadcast:
      return rootsDomain ? Crossing{others * s, 0} : Crossing{0, s};
    case SimCollective::Reduce:
      return rootsDomain ? Crossing{0, others * s} : Crossing{s, 0};
    case SimCollective::AlltoAll:
      return {n * s * (nranks - n) / nranks, n * s * (nranks - n) / nranks};
    case SimCollective::SendRecv:
      return {s, s};
  }
  return {};
}

}  // namespace

double idealSeconds(const ClusterSpec& cluster, const OpSpec& op) {
  const int domains = static_cast<int>(cluster.domains.size());
  const int nranks = cluster.nranks();
  const double nicRate = cluster.nics.gbps * 1e9 / 8;
  double library = 0, crossing = 0, loopbackBytes = 0;
  int firstRank = 0;
  for (int d = 0; d < domains; ++d) {
    const DomainSpec& domain = cluster.domains[d];
    const int n = domain.hosts * domain.ranksPerHost;
    const bool rootsDomain = op.root >= firstRank && op.root < firstRank + n;
    firstRank += n;
    double bus = domain.library.busGBps * 1e9;
    if (domain.hosts > 1)
      bus = std::min(bus, cluster.nics.perHost * nicRate / domain.ranksPerHost);
    if (op.collective != SimCollective::SendRecv)
      library =
          std::max(library, domainCollectiveSeconds(domainShare(op, n, nranks),
                                                    n, domain.library, bus));
    if (domains == 1) continue;
    const Crossing bytes = crossingBytes(op, n, nranks, domains, rootsDomain);
    loopbackBytes += bytes.out;
    // A ring's transfer between two domains leaves by one rank's NIC.
    const double rate = op.collective == SimCollective::SendRecv
                            ? nicRate
                            : domain.hosts * cluster.nics.perHost * nicRate;
    crossing = std::max(crossing, std::max(bytes.out, bytes.in) / rate);
  }
  // Pretend hosts: everything that crosses shares the one loopback.
  if (cluster.loopbackGBps > 0 && domains > 1)
    crossing = loopbackBytes / (cluster.loopbackGBps * 1e9);
  // Whatever crosses takes at least one transfer's latency: without it a
  // small send/recv ring, which uses no library, would have no yardstick.
  if (domains > 1) crossing += cluster.nics.latencyUs * 1e-6;
  return library + crossing;
}

}  // namespace hetccl::sim
