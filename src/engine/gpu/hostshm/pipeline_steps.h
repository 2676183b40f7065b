// How the stream-driven paths through host memory cut an operation into
// pipeline steps.
#pragma once

#include <cstddef>

namespace hetccl {

// Bytes per step of an operation of `opBytes`: at most `maxStepBytes` (a
// slot); an operation of fewer than four such steps is cut into four
// smaller ones (of at least 1 MiB, a page multiple): with a single step,
// copies to and from the host could not overlap at all.
size_t pipelineStepBytes(size_t opBytes, size_t maxStepBytes);

}  // namespace hetccl
