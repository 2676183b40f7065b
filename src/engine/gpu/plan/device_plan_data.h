// Plan data on a GPU: the plan's reductions (the module's kernels), copies
// and scratch, all enqueued on the GPU engine's stream.
#pragma once

#include "algo/plan_data.h"
#include "engine/gpu/stream_timeline.h"
#include "runtime/device/device_resources.h"

namespace hetccl {

class DevicePlanData : public PlanData {
 public:
  // `scratchBytes` of device memory, allocated now: allocating while a
  // caller's stream waits for the engine would serialise the GPU's streams
  // (CUDA's implicit synchronisation) and deadlock it.
  // `timeline`: null unless HETCCL_ENGINE_TIMELINE.
  DevicePlanData(const DeviceModule& module, void* stream, size_t scratchBytes,
                 StreamTimeline* timeline);

  void reduce(void* dst, const void* const* sources, int nsources, size_t count,
              const Reduction& reduction) override;
  void copy(void* dst, const void* src, size_t bytes) override;
  // Plans need at most two pipeline steps' worth (the engine sizes it).
  char* scratch(size_t bytes) override;

 private:
  const DeviceModule& module_;
  void* stream_;
  StreamTimeline* timeline_;
  const size_t scratchBytes_;
  DeviceMemory scratch_;
};

}  // namespace hetccl
