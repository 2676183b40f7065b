// What a rank says about itself once its communicator exists: the facts of
// the report's header (RankInfo), the runtime the library placed it on, and
// the library's map of the communicator. hetccl-perf and hetccl-doctor
// share them.
#pragma once

#include <string>

#include "perf/device.h"
#include "perf/rank_context.h"
#include "perf/report.h"

namespace hetccl {
namespace perf {

RankInfo describeRank(const RankContext& context, hetcclRuntimeKind_t kind);

// HetCCL says where it placed the rank; any other library runs it on the
// GPU that was made current (`gpu`).
hetcclRuntimeKind_t rankRuntime(const NcclApi& nccl, ncclComm_t comm,
                                const GpuSelection& gpu);

// HetCCL's map of the communicator (hetcclCommTopology); empty from a
// library without one.
std::string topologyOf(const NcclApi& nccl, ncclComm_t comm);
// What runs this rank's domain (hetcclCommDomainLibrary); empty from a
// library without it.
std::string domainLibraryOf(const NcclApi& nccl, ncclComm_t comm);
// Where this GPU rank's buffers go toward each other domain, one line per
// domain (hetcclCommGpuBuffers); empty for a CPU rank, and from a library
// without it.
std::string gpuBuffersOf(const NcclApi& nccl, ncclComm_t comm);

}  // namespace perf
}  // namespace hetccl
