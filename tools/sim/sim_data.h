// A simulated rank's data: reductions and copies cost the time its memory
// takes to read and write the bytes; scratch is counted, never allocated.
#pragma once

#include <cstddef>
#include <cstdint>

#include "algo/plan_data.h"
#include "scheduler.h"
#include "sim_stream.h"

namespace hetccl::sim {

// Where simulated buffers start: addresses the plans compute with and
// nothing ever reads.
char* fakeAddress(int region);

class SimData : public PlanData {
 public:
  // `stream`: a GPU rank's (its copies and reductions run there), null
  // for a CPU rank.
  SimData(Scheduler& scheduler, double memoryBytesPerSecond, SimStream* stream)
      : scheduler_(scheduler), rate_(memoryBytesPerSecond), stream_(stream) {}

  void reduce(void* dst, const void* const* sources, int nsources, size_t count,
              const Reduction& reduction) override;
  void copy(void* dst, const void* src, size_t bytes) override;
  char* scratch(size_t bytes) override;

  size_t scratchBytes() const { return scratchBytes_; }
  double busySeconds() const { return busySeconds_; }

 private:
  void spend(double bytesMoved);

  Scheduler& scheduler_;
  const double rate_;
  SimStream* const stream_;
  size_t scratchBytes_ = 0;
  double busySeconds_ = 0;
};

}  // namespace hetccl::sim
