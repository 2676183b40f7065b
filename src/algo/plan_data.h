// Where a plan's buffers live, and how the plan touches them itself: the
// host plan executor's plans run on host memory and finish each step before it
// returns; the GPU engine's enqueue each step on its stream, in order with
// the domain steps and the staged link transfers of the same plan.
#pragma once

#include <cstddef>

#include "runtime/reduction.h"

namespace hetccl {

class PlanData {
 public:
  virtual ~PlanData() = default;
  // dst = sources[0] (op) sources[1] ... in source order, `count`
  // elements; dst may equal a source.
  virtual void reduce(void* dst, const void* const* sources, int nsources,
                      size_t count, const Reduction& reduction) = 0;
  virtual void copy(void* dst, const void* src, size_t bytes) = 0;
  // Scratch of at least `bytes`, valid until the next call; its contents
  // are kept only while it does not grow.
  virtual char* scratch(size_t bytes) = 0;
};

}  // namespace hetccl
