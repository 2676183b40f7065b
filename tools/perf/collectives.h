// The collectives the benchmark runs: their names, nccl-tests sizes and
// bus-bandwidth factors, where each reads and writes for the out-of-place
// and in-place forms, and how each is launched through the NCCL API.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "op_kinds.h"
#include "perf/nccl_api.h"

namespace hetccl {
namespace perf {

// One per NCCL collective of op_kinds.def (numbered as OpKind numbers
// them), then sendrecv: hetccl-perf's pairing of the Send and Recv rows.
enum class CollKind {
#define HETCCL_COLLECTIVE(kind, ...) k##kind,
#define HETCCL_POINT_TO_POINT(kind, ...)
#include "op_kinds.def"
#undef HETCCL_COLLECTIVE
#undef HETCCL_POINT_TO_POINT
  kSendRecv
};

// Facts from the rows of op_kinds.def (for sendrecv: its sender's Send
// row and its receiver's Recv row).
struct Collective {
  CollKind kind;
  const char* name;     // the rows' cliName; "sendrecv"
  bool reduces;         // takes a reduction op
  bool rooted;          // takes a root rank
  bool hasInPlaceForm;  // NCCL defines an in-place form of the call
};

// In the order nccl-tests lists them.
const std::vector<Collective>& allCollectives();

// Accepts the names above and aliases (all_reduce, bcast, a2a, ...).
const Collective* findCollective(const std::string& name);

// busbw = algbw * factor (nccl-tests' definitions).
double busBandwidthFactor(CollKind kind, int nranks);

// Element counts of one run. nccl-tests semantics: the size is the buffer
// for allreduce/broadcast/reduce/sendrecv, and the total (gathered,
// scattered, exchanged) buffer for allgather/reducescatter/alltoall/gather/
// scatter, rounded down to a whole number of elements per rank.
struct Shape {
  size_t bytes;      // the size reported
  size_t count;      // bytes / element size: the table's count column
  size_t callCount;  // the count argument of the NCCL call
  size_t sendCount;  // elements each rank's send buffer holds
  size_t recvCount;  // elements each rank's receive buffer holds
};

Shape shapeFor(CollKind kind, size_t requestedBytes, size_t elementSize,
               int nranks);

// Where a call reads and writes. Out-of-place runs read sendBase and write
// recvBase; in-place runs use recvBase alone, laid out as NCCL defines
// in-place for each collective.
struct CallBuffers {
  void* send;
  void* recv;
};

CallBuffers callBuffers(CollKind kind, bool inPlace, void* sendBase,
                        void* recvBase, const Shape& shape, int rank,
                        size_t elementSize);

struct CallContext {
  const NcclApi* nccl;
  const Collective* collective;
  ncclDataType_t dataType;
  size_t elementSize;
  ncclRedOp_t op;
  int root;
  int rank;
  int nranks;
  ncclComm_t comm;
  cudaStream_t stream;
};

// Enqueues one collective through context.nccl (for sendrecv: a ring
// exchange, send to rank+1 and receive from rank-1, in one group; for
// alltoall, gather and scatter without ncclAlltoAll, ncclGather or
// ncclScatter in the library: their sends and receives, in one group).
ncclResult_t launchCollective(const CallContext& context, const Shape& shape,
                              const CallBuffers& buffers);

}  // namespace perf
}  // namespace hetccl
