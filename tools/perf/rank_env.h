// Where this process sits among the ranks, from the environment that started
// it: hetccl-perf -np, torchrun, mpirun (Open MPI or PMI) or srun; a process
// started alone is the only rank. Also produces the unique id the ranks
// share.
#pragma once

#include <string>

#include "perf/nccl_api.h"

namespace hetccl {
namespace perf {

// Environment variables that hetccl-perf -np gives the ranks it starts.
constexpr const char* kEnvRank = "HETCCL_PERF_RANK";
constexpr const char* kEnvNranks = "HETCCL_PERF_NRANKS";
constexpr const char* kEnvLocalRank = "HETCCL_PERF_LOCAL_RANK";
constexpr const char* kEnvUniqueId = "HETCCL_PERF_UNIQUE_ID";

struct RankSetup {
  int rank = 0;
  int nranks = 1;
  int localRank = 0;
  std::string launcher;  // for the header: "hetccl-perf -np", "torchrun", ...
  ncclUniqueId id{};
};

// True in a rank started by hetccl-perf -np.
bool isSpawnedRank();

// Reads the rank, size and local rank, and obtains the unique id: from the
// -np parent, or with the library's ncclGetUniqueId at HETCCL_COMM_ID /
// NCCL_COMM_ID (which under torchrun defaults to MASTER_ADDR:MASTER_PORT+1;
// a library that is not HetCCL reads only NCCL_COMM_ID, so it is set from
// HETCCL_COMM_ID). Throws PerfError with what to set when the ranks could
// not meet.
RankSetup discoverRank(const NcclApi& nccl);

std::string uniqueIdToHex(const ncclUniqueId& id);
bool uniqueIdFromHex(const std::string& hex, ncclUniqueId* id);

}  // namespace perf
}  // namespace hetccl
