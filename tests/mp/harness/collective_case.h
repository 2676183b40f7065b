// One collective call as a test case: its parameters, and one rank's side of
// running it (buffers with guards, deterministic inputs, the call, and the
// check of every output byte against what the inputs of all ranks imply).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/data.h"
#include "harness/guarded_buffer.h"
#include "nccl.h"
#include "op_kinds.h"

namespace hetccl::mp {

// One per NCCL collective of op_kinds.def (numbered as OpKind numbers
// them), then kBcast: ncclBcast, the harness's own in-place form of the
// Broadcast row.
enum class Collective {
#define HETCCL_COLLECTIVE(kind, ...) k##kind,
#define HETCCL_POINT_TO_POINT(kind, ...)
#include "op_kinds.def"
#undef HETCCL_COLLECTIVE
#undef HETCCL_POINT_TO_POINT
  kBcast
};

// Every collective once, in the order the tests number their cases.
const std::vector<Collective>& allCollectives();
// The row of op_kinds.def a collective follows (Broadcast's for kBcast).
const op_kinds::OpTraits& traitsOf(Collective collective);
const char* collectiveName(Collective collective);
bool isReducing(Collective collective);
bool hasRoot(Collective collective);
bool supportsInPlace(Collective collective);
// Whether a buffer holds one block per rank, so that NCCL's count is a
// part of the total (all-gather, reduce-scatter, all-to-all, gather,
// scatter).
bool isSplitAcrossRanks(Collective collective);

struct CollectiveCase {
  Collective collective = Collective::kAllReduce;
  ncclDataType_t type = ncclFloat32;
  TestOp op = TestOp::kSum;  // reducing collectives only
  size_t count = 0;          // the count argument NCCL takes
  bool inPlace = false;
  int root = 0;
  bool onStream = false;  // a host stream, else the NULL stream
  uint64_t seed = 0;

  std::string describe() const;
};

class CollectiveRun {
 public:
  CollectiveRun(const CollectiveCase& testCase, ncclComm_t comm, int rank,
                int nranks);
  CollectiveRun(const CollectiveRun&) = delete;  // the library holds pointers
  CollectiveRun& operator=(const CollectiveRun&) = delete;

  // Issues the call (creating and, right after, destroying a PreMulSum op
  // when the case needs one: NCCL allows destroying it once the call
  // returns). Returns the first error.
  ncclResult_t issue(cudaStream_t stream);
  // "" when every output byte, the untouched buffers and all guards are
  // right; else the first problem found.
  std::string verify() const;
  // Digest of the output that every rank must hold bit for bit (0 if the
  // collective gives ranks different outputs).
  uint64_t sharedOutputHash() const;

 private:
  size_t elementSize() const;
  size_t sendElements() const;
  size_t recvElements() const;
  bool isRoot() const { return rank_ == case_.root; }
  bool sharesOneBuffer() const;
  void layOutBuffers();
  void fillInputs();
  ncclResult_t createPreMulSum(ncclRedOp_t* op);
  ncclResult_t call(ncclRedOp_t op, cudaStream_t stream);
  std::string verifyOutput() const;
  std::string verifyMovedBlocks() const;
  std::string verifyUntouched() const;

  CollectiveCase case_;
  ncclComm_t comm_;
  int rank_;
  int nranks_;
  ReduceSpec spec_;
  GuardedBuffer first_;   // send buffer, or the only buffer when in place
  GuardedBuffer second_;  // recv buffer when out of place
  unsigned char* send_ = nullptr;
  unsigned char* recv_ = nullptr;
  uint64_t sendHashBefore_ = 0;
  unsigned char scalar_[8] = {};  // PreMulSum scalar; read at execution
};

}  // namespace hetccl::mp
