// Reduction operators a communicator's users created (ncclRedOpCreate*).
#pragma once

#include <mutex>
#include <optional>
#include <vector>

#include "nccl.h"
#include "op/op.h"

namespace hetccl {

class UserOps {
 public:
  // Ops and residences are taken as the ints the caller passed (see
  // enumValue); `dtype` must already be checked.
  ncclRedOp_t createPreMulSum(const void* scalar, ncclDataType_t dtype,
                              int residence);
  void destroy(int op);
  // Resolves a built-in or user op for use with `dtype`; throws
  // ncclInvalidArgument for an unknown op or a dtype it was not made for.
  ReduceSpec resolve(int op, ncclDataType_t dtype) const;

 private:
  struct Entry {
    ncclDataType_t dtype;
    ReduceSpec spec;
  };
  mutable std::mutex mutex_;
  std::vector<std::optional<Entry>> entries_;  // index = op - ncclNumOps
};

}  // namespace hetccl
