// Which domain each rank belongs to. A domain is a set of ranks that share
// one vendor library and one device runtime: all NVIDIA ranks, all AMD
// ranks, and, for CPU ranks, all CPU ranks of one host (HetCCL's own host
// collectives work through shared memory, so they stop at the host).
//
// HETCCL_DOMAINS splits domains further, for tests and odd setups:
//   "0,0,1,1"  an explicit label per rank (one entry per rank)
//   "split:K"  K contiguous blocks of ranks of near-equal size
//   "host"     one domain per host, for every runtime
// Ranks share a domain only if they share runtime, label and (for CPU
// ranks) host. Domains are numbered in the order of their lowest rank.
#pragma once

#include <string>
#include <vector>

#include <cstdint>

namespace hetccl {

// The label `rank` takes from a HETCCL_DOMAINS value; kNoDomainLabel when
// the value is empty. Throws ncclInvalidArgument for a malformed value.
constexpr int kNoDomainLabel = -1;
constexpr int kDomainPerHost = -2;
int domainLabelFromSpec(const std::string& spec, int rank, int nranks);

// Where a rank runs, as far as domains are concerned.
struct RankPlacement {
  int runtime;      // RuntimeKind
  int domainLabel;  // from domainLabelFromSpec
  uint64_t hostId;  // equal for ranks that share a host
};

class DomainMap {
 public:
  explicit DomainMap(const std::vector<RankPlacement>& ranks);

  int count() const { return static_cast<int>(members_.size()); }
  int nranks() const { return static_cast<int>(domainOf_.size()); }
  int domainOf(int rank) const { return domainOf_[rank]; }
  // The ranks of `domain`, ascending.
  const std::vector<int>& members(int domain) const { return members_[domain]; }
  // A rank's position among its domain's members.
  int localRank(int rank) const { return localRank_[rank]; }

 private:
  std::vector<int> domainOf_;
  std::vector<int> localRank_;
  std::vector<std::vector<int>> members_;
};

}  // namespace hetccl
