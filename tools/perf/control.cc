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
  std::vector<RankInfo> all(static_cast<size_t>(context_.nranks));
  allGatherBytes(&mine, sizeof(RankInfo), all.data());
  return all;
}

std::vector<std::string> Control::allGather(const std::string& mine) {
  const size_t nranks = static_cast<size_t>(context_.nranks);
  std::vector<char> text(kTextBytes, '\0');
  mine.copy(text.data(), kTextBytes - 1);
  std::vector<char> all(nranks * kTextBytes);
  allGatherBytes(text.data(), kTextBytes, all.data());
  std::vector<std::string> texts;
  for (size_t r = 0; r < nranks; ++r)
    texts.emplace_back(all.data() + r * kTextBytes);
  return texts;
}

void Control::allGatherBytes(const void* mine, size_t bytes, void* all) {
  Device& device = *context_.device;
  const size_t nranks = static_cast<size_t>(context_.nranks);
  DeviceBuffer gathered(device, nranks * bytes);
  char* slot = static_cast<char*>(gathered.get()) +
               static_cast<size_t>(context_.rank) * bytes;
  device.copyToDevice(slot, mine, bytes);
  const NcclApi& nccl = *context_.nccl;
  nccl.check(nccl.allGather(slot, gathered.get(), bytes, ncclUint8,
                            context_.comm, context_.stream),
             "ncclAllGather (describing the ranks)", context_.comm);
  device.synchronize(context_.stream, context_.comm);
  device.copyToHost(all, gathered.get(), nranks * bytes);
}

}  // namespace perf
}  // namespace hetccl
