// Ranks as threads of the test process.
#pragma once

#include <functional>
#include <vector>

namespace hetccl {

// Runs body(rank) on one thread per rank, joins them all, then rethrows
// the first failure (so no thread outlives the test).
void runRanks(int nranks, const std::function<void(int)>& body);

// Every rank of `nranks` except `rank`, in order.
std::vector<int> everyoneBut(int rank, int nranks);

}  // namespace hetccl
