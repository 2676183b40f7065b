// Runs a list of collective cases on one communicator the way a real
// program does: several calls in flight before one synchronization.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "harness/collective_case.h"
#include "harness/domains.h"
#include "harness/rank_context.h"
#include "nccl.h"

namespace hetccl::mp {

// Issues the cases in batches of up to `batchLimit` consecutive cases that
// share a stream mode (NULL stream or a host stream), synchronizes once per
// stream batch, and checks every output. Then checks that all ranks saw the
// same shared outputs. Failures fail the rank (MP_CHECK).
void runAndCheckCases(RankContext& ctx, ncclComm_t comm,
                      const std::vector<CollectiveCase>& cases,
                      size_t batchLimit);

// Runs `cases` in ranks of `layout` (with `env` set besides the layout's
// variables): each creates a communicator, checks it has the layout's
// domains, runs and checks the cases as above, and destroys it.
void runCasesOnLayout(const DomainLayout& layout,
                      const std::vector<CollectiveCase>& cases,
                      size_t batchLimit,
                      const std::map<std::string, std::string>& env);

}  // namespace hetccl::mp
