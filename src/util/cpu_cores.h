// The cores this process may run on (its affinity mask), which the
// thread counts chosen by default follow.
#pragma once

#include <cstddef>

namespace hetccl {

// At least 1.
int availableCores();

// The cores one of the `hostRanks` ranks of this host may count on, at
// least 1: all of `available` (the process's affinity) where the host's
// ranks fit side by side in its `online` cores, as when a launcher binds
// each rank to a share of its own; else an even share of `available`,
// which the host's ranks then have in common.
int coresOfOneRank(int available, int online, size_t hostRanks);
// The same for this process and machine.
int coresOfOneRank(size_t hostRanks);

}  // namespace hetccl
