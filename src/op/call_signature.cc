#include "op/call_signature.h"

#include <cctype>

#include "op/op_traits.h"
#include "util/dtype.h"
#include "util/error.h"

namespace hetccl {
namespace {

// NCCL's function name without its prefix: "allReduce", "alltoAll".
std::string nameOf(OpKind call) {
  const OpTraits* traits = findOpTraits(call);
  if (traits == nullptr) return "an unknown call";
  std::string name = traits->name;
  name[0] = static_cast<char>(std::tolower(name[0]));
  return name;
}

std::string reductionName(const CallSignature& c) {
  if (c.reduceFlags & CallSignature::kAverage) return "avg";
  if (c.reduceFlags & CallSignature::kPremultiplied)
    return (c.reduceFlags & CallSignature::kDeviceScalar)
               ? "premulsum with a device scalar"
               : "premulsum with a host scalar";
  return redOpName(static_cast<ncclRedOp_t>(c.redOp));
}

}  // namespace

std::string describeCall(const CallSignature& c) {
  std::string text = format("%s(%llu x %s", nameOf(c.call).c_str(),
                            static_cast<unsigned long long>(c.count),
                            dtypeName(static_cast<ncclDataType_t>(c.dtype)));
  if (c.redOp != CallSignature::kNoReduction) text += ", " + reductionName(c);
  const OpTraits* traits = findOpTraits(c.call);
  if (traits != nullptr && traits->hasRoot) text += format(", root %d", c.root);
  if (c.call == OpKind::Send) text += format(", to rank %d", c.root);
  if (c.call == OpKind::Recv) text += format(", from rank %d", c.root);
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
