// Large copies and reductions of host memory, cut into element ranges that
// helper threads (helper_threads.h) run together with the calling thread.
// One core streams memory at a few GB/s (a float32 sum of two sources
// wrote 3.7 GB/s and a copy about 6 GB/s on the H200 machine's CPU), less
// than a link between hosts or a host's memory carries, so a CPU rank
// whose copies run on one thread leaves both idle. Each element is
// computed as on one thread, so results stay bitwise the same.
#pragma once

#include <cstddef>
#include <functional>
#include <mutex>

#include "runtime/host/helper_threads.h"
#include "runtime/reduction.h"

namespace hetccl {

class MemoryWorkers {
 public:
  // `helpers` threads beside the caller's; a range smaller than
  // `minPartBytes` is not worth a thread of its own.
  MemoryWorkers(int helpers, size_t minPartBytes);

  // Threads a job may use: the helpers and the caller.
  int parts() const { return helpers_.parts(); }

  // Safe from several threads: their jobs take turns.
  void copy(void* dst, const void* src, size_t bytes);
  void reduce(void* dst, const void* const* sources, int nsources, size_t count,
              const Reduction& reduction);

 private:
  // body(first, n) for ranges of `count` elements of `elementBytes` that
  // together cover [0, count), in parallel where they are large enough.
  void inParts(size_t count, size_t elementBytes,
               const std::function<void(size_t first, size_t n)>& body);

  const size_t minPartBytes_;
  std::mutex jobMutex_;  // one job at a time on the helpers
  HelperThreads helpers_;
};

// HETCCL_HOST_THREADS's helpers beside a CPU rank's own thread: `setting`
// threads in all (> 0), or by default one per 2 cores of each of the
// host's `hostRanks` ranks, at most 4 (a CPU rank's link threads need
// cores too).
int memoryHelpers(int setting, size_t hostRanks);

}  // namespace hetccl
