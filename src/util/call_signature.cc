#include "util/call_signature.h"

#include "util/dtype.h"
#include "util/error.h"

namespace hetccl {
namespace {

const char* nameOf(CallName call) {
  switch (call) {
    case CallName::AllReduce:
      return "allReduce";
    case CallName::Broadcast:
      return "broadcast";
    case CallName::Reduce:
      return "reduce";
    case CallName::AllGather:
      return "allGather";
    case CallName::ReduceScatter:
      return "reduceScatter";
    case CallName::AlltoAll:
      return "alltoAll";
    case CallName::Gather:
      return "gather";
    case CallName::Scatter:
      return "scatter";
    case CallName::Send:
      return "send";
    case CallName::Recv:
      return "recv";
  }
  return "an unknown call";
}

std::string reductionName(const CallSignature& c) {
  if (c.reduceFlags & CallSignature::kAverage) return "avg";
  if (c.reduceFlags & CallSignature::kPremultiplied)
    return (c.reduceFlags & CallSignature::kDeviceScalar)
               ? "premulsum with a device scalar"
               : "premulsum with a host scalar";
  return redOpName(static_cast<ncclRedOp_t>(c.redOp));
}

bool hasRoot(CallName call) {
  return call == CallName::Broadcast || call == CallName::Reduce ||
         call == CallName::Gather || call == CallName::Scatter;
}

}  // namespace

std::string describeCall(const CallSignature& c) {
  std::string text = format("%s(%llu x %s", nameOf(c.call),
                            static_cast<unsigned long long>(c.count),
                            dtypeName(static_cast<ncclDataType_t>(c.dtype)));
  if (c.redOp != CallSignature::kNoReduction) text += ", " + reductionName(c);
  if (hasRoot(c.call)) text += format(", root %d", c.root);
  if (c.call == CallName::Send) text += format(", to rank %d", c.root);
  if (c.call == CallName::Recv) text += format(", from rank %d", c.root);
  return text + ")";
}

bool callsAgree(const CallSignature& a, const CallSignature& b) {
  if (a.pointToPoint() || b.pointToPoint())
    return a.pointToPoint() && b.pointToPoint() && a.call != b.call &&
           a.sequence == b.sequence && a.count == b.count && a.dtype == b.dtype;
  return a.sequence == b.sequence && a.call == b.call && a.count == b.count &&
         a.dtype == b.dtype && a.redOp == b.redOp &&
         a.reduceFlags == b.reduceFlags && a.root == b.root;
}

std::string describeDisagreement(int rankA, const CallSignature& a, int rankB,
                                 const CallSignature& b) {
  const std::string prefix =
      a.sequence == b.sequence
          ? format("op #%llu: ", static_cast<unsigned long long>(a.sequence))
          : format("rank %d's op #%llu against rank %d's op #%llu: ", rankA,
                   static_cast<unsigned long long>(a.sequence), rankB,
                   static_cast<unsigned long long>(b.sequence));
  return prefix + format("rank %d called %s but rank %d called %s", rankA,
                         describeCall(a).c_str(), rankB,
                         describeCall(b).c_str());
}

}  // namespace hetccl
