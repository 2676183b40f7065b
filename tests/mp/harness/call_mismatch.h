// The disagreement check, shared by the layouts of one host
// (tests/mp/test_call_mismatch.cc) and those of two network namespaces
// (tests/netns/test_netns_call_mismatch.cc): ranks whose calls disagree
// fail instead of exchanging buffers of another meaning. The ranks of the
// second half make another call than those of the first: half the count,
// another type of the same size, another reduction, a broadcast in place
// of an all-reduce, another root (each half names its own first rank, so
// both send), roots that face each other (each half names the other's, so
// both wait to receive and no byte moves), a receive of another count
// than the send. In every layout every rank gets ncclInvalidUsage within a
// second: from the call, from its stream, or from ncclCommGetAsyncError
// while the stream waits (a GPU rank's stream stays blocked until the
// abort), and ncclGetLastError names both calls of a pair that disagrees
// (with two pairs of send and receive, either pair's); the abort and the
// stream's synchronize return within 5 s. HETCCL_TIMEOUT=30, so that a
// timeout cannot pass for detection.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "harness/domains.h"
#include "harness/run_ranks.h"

namespace hetccl::mp {

enum class Disagreement {
  Count,
  Type,
  Reduction,
  Kind,
  Root,
  FacingRoots,
  SendRecvCount
};

struct MismatchCase {
  Disagreement what;
  DomainLayout layout;
  int nranks;  // even: the second half disagrees with the first

  std::string name() const;
};

void PrintTo(const MismatchCase& c, std::ostream* out);

// Every disagreement in every layout, on `nranks` ranks; 0: two, or one
// for each label of the layout (a layout of hosts has no labels, so it
// needs a count).
std::vector<MismatchCase> mismatchMatrix(
    const std::vector<DomainLayout>& layouts, int nranks = 0);

// Runs one case (skipped where it needs the UCX module and this build has
// none). `options` carries what the caller's setting needs beyond the
// layout (e.g. each rank's network namespace); the case sets the layout's
// variables and HETCCL_TIMEOUT.
void runMismatchCase(const MismatchCase& c, RunOptions options = {});

}  // namespace hetccl::mp
