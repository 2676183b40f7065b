// hetccl-doctor's probes: a short all-reduce on each domain alone (its
// library) and on each pair of domains (the link between them), each on a
// communicator split from the job's (ncclCommSplit). Collective over the
// job's communicator: every rank calls them, members or not.
#pragma once

#include <string>
#include <vector>

#include "perf/control.h"
#include "perf/rank_context.h"

namespace hetccl {
namespace doctor {

struct Probe {
  int domainA = 0;
  int domainB = -1;  // -1: domain A alone
  int ranks = 0;
  double latencyUs = 0;  // an 8-byte all-reduce, the slowest member's
  double busbwGBps = 0;  // a `bytes` all-reduce, by the slowest member
  bool failed = false;   // on some rank (which says why on its stderr)
};

// `domainOf`: every rank's domain. `bytes`: the bandwidth probe's size.
std::vector<Probe> probeDomainsAndLinks(const perf::RankContext& job,
                                        perf::Control& control,
                                        const std::vector<int>& domainOf,
                                        size_t bytes);

}  // namespace doctor
}  // namespace hetccl
