// hetccl-perf -np N: starts N ranks of this program on this host and
// supervises them. This process creates the unique id (its HetCCL root
// listener serves the rendezvous, so it stays alive until the ranks are
// done), hands it to the ranks in HETCCL_PERF_UNIQUE_ID, and stops every
// rank as soon as one fails, on a signal, or at the timeout.
#pragma once

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
int runLocalRanks(const Options& options, char** argv);

}  // namespace perf
}  // namespace hetccl
