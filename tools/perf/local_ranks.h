// hetccl-perf -np N: starts N ranks of this program on this host and
// supervises them. This process creates the unique id with the library
// under test (the root that this starts serves the rendezvous, with HetCCL
// and with NVIDIA's NCCL alike, so this process stays alive until the ranks
// are done), hands it to the ranks in HETCCL_PERF_UNIQUE_ID, and stops every
// rank as soon as one fails, on a signal, or at the timeout.
#pragma once

#include "perf/nccl_api.h"
#include "perf/options.h"

namespace hetccl {
namespace perf {

// Exit statuses of a rank and of the whole run.
constexpr int kExitOk = 0;
constexpr int kExitWrongResults = 1;
constexpr int kExitError = 2;
constexpr int kExitTimeout = 124;

// Returns the exit status for the whole run: 0 when every rank succeeded,
// kExitWrongResults when results were wrong, kExitError when a rank failed
// or died, kExitTimeout at the timeout, 128+signal when interrupted.
int runLocalRanks(const Options& options, const NcclApi& nccl, char** argv);

}  // namespace perf
}  // namespace hetccl
