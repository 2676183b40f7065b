// The fail-stop check, shared by the layouts of one host
// (tests/mp/test_fail_stop.cc) and those of two network namespaces
// (tests/netns/test_netns_fail_stop.cc): one rank leaves (exits without
// destroying its communicator, destroys it and exits, is killed, or stops
// past HETCCL_TIMEOUT), and every survivor's next operation either
// completes with the right result (one that did not need the rank) or
// fails with ncclRemoteError, promptly; an emulated GPU stream stays
// blocked until ncclCommAbort releases it, and the abort returns promptly.
// Every operation carries fresh values, so stale data from the previous
// one is caught.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "harness/domains.h"
#include "harness/run_ranks.h"

namespace hetccl::mp {

enum class Departure { Exit, DestroyThenExit, Kill, Stop };
enum class Operation {
  AllReduce,
  AllGather,
  ReduceScatter,
  Broadcast,  // from the last rank, which must not be the one that leaves
  AllToAll,
  SendRecvRing,
  GroupOfTwo,
};

struct FailStopCase {
  DomainLayout layout;
  std::string layoutName;
  Departure departure;
  Operation operation;
  size_t count;
  int nranks;
  int leaving;

  std::string name() const;
};

void PrintTo(const FailStopCase& param, std::ostream* out);

// Every layout meets every departure; the operations take turns, so that
// each meets every layout-departure pair's neighbours and, over the
// matrix, every departure several times; sizes alternate between a
// low-latency one and several chunks.
std::vector<FailStopCase> failStopMatrix(
    const std::vector<std::pair<std::string, DomainLayout>>& layouts,
    int nranks, int leaving);

// Runs one case: every rank checks an operation, `leaving` departs, the
// others survive it. `options` carries what the caller's setting needs
// beyond the layout (e.g. each rank's network namespace); the case sets
// the layout's variables, HETCCL_TIMEOUT and the leaving rank's signal.
void runFailStopCase(const FailStopCase& param, RunOptions options = {});

}  // namespace hetccl::mp
