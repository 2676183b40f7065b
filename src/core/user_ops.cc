#include "core/user_ops.h"

#include <cstring>

#include "util/dtype.h"
#include "util/error.h"

namespace hetccl {

ncclRedOp_t UserOps::createPreMulSum(const void* scalar, ncclDataType_t dtype,
                                     int residence) {
  HETCCL_CHECK_ARG(scalar != nullptr, "PreMulSum scalar is NULL");
  HETCCL_CHECK_ARG(
      residence == ncclScalarDevice || residence == ncclScalarHostImmediate,
      "invalid scalar residence %d", residence);
  Entry entry{dtype, ReduceSpec{}};
  entry.spec.base = ncclSum;
  entry.spec.preMultiply = true;
  if (residence == ncclScalarHostImmediate)
    std::memcpy(&entry.spec.scalarValue, scalar, dtypeSize(dtype));
  else
    entry.spec.scalarPointer = scalar;  // read when the operation runs
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (!entries_[i]) {
      entries_[i] = entry;
      return static_cast<ncclRedOp_t>(ncclNumOps + i);
    }
  }
  entries_.push_back(entry);
  return static_cast<ncclRedOp_t>(ncclNumOps + entries_.size() - 1);
}

void UserOps::destroy(int op) {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t index = static_cast<size_t>(op) - ncclNumOps;
  HETCCL_CHECK_ARG(
      op >= ncclNumOps && index < entries_.size() && entries_[index],
      "reduction op %d was not created on this communicator "
      "(built-in ops cannot be destroyed)",
      op);
  entries_[index].reset();
}

ReduceSpec UserOps::resolve(int value, ncclDataType_t dtype) const {
  if (value >= 0 && value < ncclNumOps) {
    ReduceSpec spec;
    spec.base = value == ncclAvg ? ncclSum : static_cast<ncclRedOp_t>(value);
    spec.average = value == ncclAvg;
    return spec;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  size_t index = static_cast<size_t>(value) - ncclNumOps;
  HETCCL_CHECK_ARG(
      value >= ncclNumOps && index < entries_.size() && entries_[index],
      "invalid reduction op %d", value);
  HETCCL_CHECK_ARG(entries_[index]->dtype == dtype,
                   "reduction op %d was created for %s, not %s", value,
                   dtypeName(entries_[index]->dtype), dtypeName(dtype));
  return entries_[index]->spec;
}

}  // namespace hetccl
