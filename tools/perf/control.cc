#include "perf/control.h"

#include "perf/perf_error.h"

namespace hetccl {
namespace perf {

Control::Control(const RankContext& context)
    : context_(context), scratch_(*context.device, sizeof(double)) {}

double Control::allReduce(double value, ncclRedOp_t op) {
  Device& device = *context_.device;
  device.copyToDevice(scratch_.get(), &value, sizeof(value));
  const NcclApi& nccl = *context_.nccl;
  nccl.check(nccl.allReduce(scratch_.get(), scratch_.get(), 1, ncclFloat64, op,
                            context_.comm, context_.stream),
             "ncclAllReduce (combining results)", context_.comm);
  device.synchronize(context_.stream, context_.comm);
  device.copyToHost(&value, scratch_.get(), sizeof(value));
  return value;
}

std::vector<RankInfo> Control::allGather(const RankInfo& mine) {
  Device& device = *context_.device;
  const size_t nranks = static_cast<size_t>(context_.nranks);
  DeviceBuffer gathered(device, nranks * sizeof(RankInfo));
  char* slot = static_cast<char*>(gathered.get()) +
               static_cast<size_t>(context_.rank) * sizeof(RankInfo);
  device.copyToDevice(slot, &mine, sizeof(RankInfo));
  const NcclApi& nccl = *context_.nccl;
  nccl.check(nccl.allGather(slot, gathered.get(), sizeof(RankInfo), ncclUint8,
                            context_.comm, context_.stream),
             "ncclAllGather (describing the ranks)", context_.comm);
  device.synchronize(context_.stream, context_.comm);
  std::vector<RankInfo> all(nranks);
  device.copyToHost(all.data(), gathered.get(), nranks * sizeof(RankInfo));
  return all;
}

}  // namespace perf
}  // namespace hetccl
