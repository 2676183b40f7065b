#include "harness/collective_case.h"

#include <algorithm>
#include <iterator>
#include <sstream>

#include "harness/hash.h"
#include "kit/dtype.h"

namespace hetccl::mp {
namespace {

// What unused output bytes hold before the call (and must still hold).
constexpr unsigned char kSentinel = 0xcd;

bool allBytesAre(const unsigned char* data, size_t bytes, unsigned char value) {
  return std::all_of(data, data + bytes,
                     [value](unsigned char b) { return b == value; });
}

std::string labelled(const std::string& label, const std::string& problem) {
  return problem.empty() ? problem : label + ": " + problem;
}

}  // namespace

using op_kinds::BufferRole;
using op_kinds::OpKind;

// The collectives' values are OpKind's first values, in its order.
#define HETCCL_COLLECTIVE(kind, ...)                                           \
  static_assert(                                                               \
      static_cast<int>(Collective::k##kind) == static_cast<int>(OpKind::kind), \
      "Collective::k" #kind " is OpKind::" #kind);
#define HETCCL_POINT_TO_POINT(kind, ...)
#include "op_kinds.def"
#undef HETCCL_COLLECTIVE
#undef HETCCL_POINT_TO_POINT
static_assert(static_cast<size_t>(Collective::kBcast) ==
                  op_kinds::kCollectiveCount,
              "kBcast follows the collectives");

const std::vector<Collective>& allCollectives() {
  static constexpr Collective kOrder[] = {
      Collective::kAllReduce, Collective::kReduceScatter,
      Collective::kAllGather, Collective::kBroadcast,
      Collective::kBcast,     Collective::kReduce,
      Collective::kAlltoAll,  Collective::kGather,
      Collective::kScatter};
  static_assert(sizeof(kOrder) / sizeof(kOrder[0]) ==
                    static_cast<size_t>(Collective::kBcast) + 1,
                "a collective of op_kinds.def is missing from the order");
  static const std::vector<Collective> collectives(std::begin(kOrder),
                                                   std::end(kOrder));
  return collectives;
}

const op_kinds::OpTraits& traitsOf(Collective collective) {
  if (collective == Collective::kBcast) {
    return op_kinds::traitsOf(OpKind::Broadcast);
  }
  return op_kinds::traitsOf(static_cast<OpKind>(collective));
}

const char* collectiveName(Collective collective) {
  return collective == Collective::kBcast ? "Bcast" : traitsOf(collective).name;
}

bool isReducing(Collective collective) { return traitsOf(collective).reduces; }

bool hasRoot(Collective collective) { return traitsOf(collective).hasRoot; }

bool supportsInPlace(Collective collective) {
  // Bcast is always in place: there is no form to choose.
  return traitsOf(collective).hasInPlaceForm &&
         collective != Collective::kBcast;
}

bool isSplitAcrossRanks(Collective collective) {
  const op_kinds::OpTraits& traits = traitsOf(collective);
  return traits.send.scaledByRanks || traits.recv.scaledByRanks;
}

std::string CollectiveCase::describe() const {
  std::ostringstream text;
  text << collectiveName(collective) << " " << kit::dataTypeOf(type).name;
  if (isReducing(collective)) text << " " << testOpName(op);
  text << " count=" << count << (inPlace ? " in-place" : " out-of-place");
  if (hasRoot(collective)) text << " root=" << root;
  text << (onStream ? " on a host stream" : " on the NULL stream")
       << " seed=" << seed;
  return text.str();
}

CollectiveRun::CollectiveRun(const CollectiveCase& testCase, ncclComm_t comm,
                             int rank, int nranks)
    : case_(testCase),
      comm_(comm),
      rank_(rank),
      nranks_(nranks),
      spec_{testCase.type, testCase.op, nranks, testCase.seed} {
  layOutBuffers();
  fillInputs();
}

size_t CollectiveRun::elementSize() const {
  return kit::dataTypeOf(case_.type).size;
}

size_t CollectiveRun::sendElements() const {
  // ncclBcast has one buffer, the receive buffer.
  if (case_.collective == Collective::kBcast) return 0;
  return traitsOf(case_.collective).send.scaledByRanks ? nranks_ * case_.count
                                                       : case_.count;
}

size_t CollectiveRun::recvElements() const {
  return traitsOf(case_.collective).recv.scaledByRanks ? nranks_ * case_.count
                                                       : case_.count;
}

bool CollectiveRun::sharesOneBuffer() const {
  if (case_.collective == Collective::kBcast) return true;
  if (!case_.inPlace) return false;
  // Where the big buffer is the root's alone (gather, scatter), the call is
  // in place only there.
  const op_kinds::OpTraits& traits = traitsOf(case_.collective);
  const bool rootOnly =
      (traits.send.scaledByRanks && traits.send.role == BufferRole::RootOnly) ||
      (traits.recv.scaledByRanks && traits.recv.role == BufferRole::RootOnly);
  return !rootOnly || isRoot();
}

void CollectiveRun::layOutBuffers() {
  size_t blockBytes = case_.count * elementSize();
  size_t sendBytes = sendElements() * elementSize();
  size_t recvBytes = recvElements() * elementSize();
  if (!sharesOneBuffer()) {
    first_ = GuardedBuffer(sendBytes);
    second_ = GuardedBuffer(recvBytes);
    send_ = first_.data();
    recv_ = second_.data();
    return;
  }
  // NCCL's in-place layouts: the small buffer is this rank's (or the
  // root's) block of the big one.
  first_ = GuardedBuffer(std::max(sendBytes, recvBytes));
  unsigned char* base = first_.data();
  send_ = recv_ = base;
  // This rank's block (the root's, where only the root is in place).
  const op_kinds::OpTraits& traits = traitsOf(case_.collective);
  unsigned char* block = base + rank_ * blockBytes;
  if (traits.send.scaledByRanks && !traits.recv.scaledByRanks) recv_ = block;
  if (traits.recv.scaledByRanks && !traits.send.scaledByRanks) send_ = block;
}

void CollectiveRun::fillInputs() {
  first_.fill(kSentinel);
  second_.fill(kSentinel);
  size_t blockBytes = case_.count * elementSize();
  switch (case_.collective) {
    case Collective::kAllReduce:
    case Collective::kReduceScatter:
    case Collective::kReduce:
      fillReduceInput(spec_, rank_, 0, sendElements(), send_);
      break;
    case Collective::kAllGather:
    case Collective::kGather:
      fillPatternBytes(case_.seed, rank_, 0, blockBytes, send_);
      break;
    case Collective::kAlltoAll:
      fillPatternBytes(case_.seed, rank_, 0, nranks_ * blockBytes, send_);
      break;
    case Collective::kBroadcast:
    case Collective::kBcast:
      if (isRoot()) fillPatternBytes(case_.seed, rank_, 0, blockBytes, send_);
      break;
    case Collective::kScatter:
      if (isRoot()) {
        fillPatternBytes(case_.seed, rank_, 0, nranks_ * blockBytes, send_);
      }
      break;
  }
  sendHashBefore_ = hashBytes(send_, sendElements() * elementSize());
}

ncclResult_t CollectiveRun::createPreMulSum(ncclRedOp_t* op) {
  double scalar = preMulSumScalar(case_.type);
  double decoy = kit::dataTypeOf(case_.type).isFloat ? 4.0 : 5.0;
  ncclResult_t result;
  if (case_.op == TestOp::kPreMulSumHost) {
    // Read at creation: changing it afterwards must not matter.
    kit::encodeValue(kit::dataTypeOf(case_.type), scalar, scalar_);
    result = ncclRedOpCreatePreMulSum(op, scalar_, case_.type,
                                      ncclScalarHostImmediate, comm_);
    kit::encodeValue(kit::dataTypeOf(case_.type), decoy, scalar_);
  } else {
    // Read at execution: what it holds when the call runs is what counts.
    kit::encodeValue(kit::dataTypeOf(case_.type), decoy, scalar_);
    result = ncclRedOpCreatePreMulSum(op, scalar_, case_.type, ncclScalarDevice,
                                      comm_);
    kit::encodeValue(kit::dataTypeOf(case_.type), scalar, scalar_);
  }
  return result;
}

ncclResult_t CollectiveRun::issue(cudaStream_t stream) {
  bool preMulSum = isReducing(case_.collective) && isPreMulSum(case_.op);
  ncclRedOp_t op = builtinRedOp(case_.op);
  if (preMulSum) {
    ncclResult_t created = createPreMulSum(&op);
    if (created != ncclSuccess) return created;
  }
  ncclResult_t result = call(op, stream);
  if (preMulSum) {
    ncclResult_t destroyed = ncclRedOpDestroy(op, comm_);
    if (result == ncclSuccess) result = destroyed;
  }
  return result;
}

ncclResult_t CollectiveRun::call(ncclRedOp_t op, cudaStream_t stream) {
  size_t count = case_.count;
  ncclDataType_t type = case_.type;
  int root = case_.root;
  switch (case_.collective) {
    case Collective::kAllReduce:
      return ncclAllReduce(send_, recv_, count, type, op, comm_, stream);
    case Collective::kReduceScatter:
      return ncclReduceScatter(send_, recv_, count, type, op, comm_, stream);
    case Collective::kAllGather:
      return ncclAllGather(send_, recv_, count, type, comm_, stream);
    case Collective::kBroadcast:
      return ncclBroadcast(send_, recv_, count, type, root, comm_, stream);
    case Collective::kBcast:
      return ncclBcast(recv_, count, type, root, comm_, stream);
    case Collective::kReduce:
      return ncclReduce(send_, recv_, count, type, op, root, comm_, stream);
    case Collective::kAlltoAll:
      return ncclAlltoAll(send_, recv_, count, type, comm_, stream);
    case Collective::kGather:
      return ncclGather(send_, recv_, count, type, root, comm_, stream);
    case Collective::kScatter:
      return ncclScatter(send_, recv_, count, type, root, comm_, stream);
  }
  return ncclInternalError;
}

std::string CollectiveRun::verify() const {
  if (!first_.guardsIntact() || !second_.guardsIntact()) {
    return "bytes just outside a buffer were overwritten";
  }
  std::string problem = verifyOutput();
  return problem.empty() ? verifyUntouched() : problem;
}

std::string CollectiveRun::verifyOutput() const {
  size_t count = case_.count;
  size_t blockBytes = count * elementSize();
  switch (case_.collective) {
    case Collective::kAllReduce:
      return labelled("recvbuff", checkReduceResult(spec_, 0, count, recv_));
    case Collective::kReduceScatter:
      return labelled("recvbuff",
                      checkReduceResult(spec_, rank_ * count, count, recv_));
    case Collective::kReduce:
      if (!isRoot()) return std::string();
      return labelled("root's recvbuff",
                      checkReduceResult(spec_, 0, count, recv_));
    case Collective::kBroadcast:
    case Collective::kBcast:
      return labelled("recvbuff", checkPatternBytes(case_.seed, case_.root, 0,
                                                    blockBytes, recv_));
    case Collective::kScatter:
      return labelled("recvbuff",
                      checkPatternBytes(case_.seed, case_.root,
                                        rank_ * blockBytes, blockBytes, recv_));
    default:
      return verifyMovedBlocks();
  }
}

// All-gather, gather (root) and all-to-all: block b came from rank b.
std::string CollectiveRun::verifyMovedBlocks() const {
  if (case_.collective == Collective::kGather && !isRoot()) {
    return std::string();
  }
  size_t blockBytes = case_.count * elementSize();
  size_t sourceOffset =
      case_.collective == Collective::kAlltoAll ? rank_ * blockBytes : 0;
  for (int peer = 0; peer < nranks_; ++peer) {
    std::string problem = checkPatternBytes(
        case_.seed, peer, sourceOffset, blockBytes, recv_ + peer * blockBytes);
    if (!problem.empty()) {
      return "recvbuff block from rank " + std::to_string(peer) + ": " +
             problem;
    }
  }
  return std::string();
}

std::string CollectiveRun::verifyUntouched() const {
  if (sharesOneBuffer()) return std::string();
  if (hashBytes(send_, sendElements() * elementSize()) != sendHashBefore_) {
    return "sendbuff was modified";
  }
  bool recvUnused = !isRoot() && (case_.collective == Collective::kReduce ||
                                  case_.collective == Collective::kGather);
  if (recvUnused && !allBytesAre(recv_, second_.size(), kSentinel)) {
    return "a non-root rank's recvbuff was written";
  }
  return std::string();
}

uint64_t CollectiveRun::sharedOutputHash() const {
  size_t blockBytes = case_.count * elementSize();
  switch (case_.collective) {
    case Collective::kAllReduce:
    case Collective::kBroadcast:
    case Collective::kBcast:
      return hashBytes(recv_, blockBytes);
    case Collective::kAllGather:
      return hashBytes(recv_, nranks_ * blockBytes);
    default:
      return 0;
  }
}

}  // namespace hetccl::mp
