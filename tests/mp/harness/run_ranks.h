// Runs a test body in one forked child process per rank.
//
// Rank 0's child creates the unique id (never the parent: forking a process
// that has library threads is unsafe) and hands it to the others through
// pipes made before fork. The parent only waits, with a timeout, and turns
// every child that did not end as expected into a gtest failure.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "harness/rank_context.h"
#include "kit/launcher.h"

namespace hetccl::mp {

struct RunOptions {
  // The whole run, from fork to the last child's exit; then all are killed.
  int timeoutSeconds = 60;
  // Set in every child before the body runs.
  std::map<std::string, std::string> env;
  // Extra variables for one rank (applied after `env`).
  std::function<std::map<std::string, std::string>(int rank)> rankEnv;
  // Runs first in each child, before rank 0 makes the unique id (e.g. to
  // move the rank into a network namespace, where its sockets must live).
  std::function<void(int rank)> enterRank;
  // Ranks that must end by a signal (e.g. a rank that kills itself).
  std::map<int, int> expectedSignals;
  // False: no id is made; ctx.id is zeroed (for tests that make their own).
  bool createUniqueId = true;
  // Runs in the parent once all children are started (e.g. to talk to a
  // bootstrap port); the children are waited for after it returns.
  std::function<void(const std::vector<pid_t>& children)> whileRunning;
};

// How one child ended, and what its failed checks reported.
struct RankOutcome : kit::RankExit {
  std::string failureMessages;
};

struct RunReport {
  std::vector<RankOutcome> ranks;
  double seconds = 0;
  bool ok = false;  // every rank ended as expected
};

// Forks `nranks` children running `body`, waits, and adds a gtest failure
// (naming ranks and how they ended) for every unexpected outcome.
RunReport runRanks(int nranks, const std::function<void(RankContext&)>& body,
                   const RunOptions& options = RunOptions());

// A TCP port on 127.0.0.1 that was free a moment ago.
int findFreeTcpPort();

}  // namespace hetccl::mp
