// The pieces of a staged launch that its stream hands to the proxy, not
// the enqueuing thread: what a CUDA graph needs to replay a launch that
// crosses domains through the staging proxy. A captured launch's GPU work
// is recorded once, with fixed values, so the proxy must move its pieces
// at every replay, when the replay reaches them, not when the launch was
// made. The launch numbers its pieces from 0 on each ring (the rings'
// counters are 0 between launches: every launch puts them back from its
// stream, staged_link.h) and leaves them here; at its start the stream
// writes kStart into the script's control word, a pinned word that the
// proxy watches; the proxy queues the pieces ahead of any waiting there
// (those belong to later launches, held back by their gate) and sets the
// word back to kIdle. The stream does not wait for that: its first piece
// waits for the proxy anyway.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/gpu/proxy/staging_proxy.h"

namespace hetccl {

class StagedLaunchScript {
 public:
  static constexpr uint64_t kIdle = 0;
  static constexpr uint64_t kStart = 1;

  // `control`: a pinned word, set to kIdle here.
  explicit StagedLaunchScript(uint64_t* control) : control_(control) {
    __atomic_store_n(control_, kIdle, __ATOMIC_RELEASE);
  }

  uint64_t* control() const { return control_; }

  // A piece, numbered from 0 in this launch on its ring.
  void add(const StagingProxy::Job& job) { jobs_.push_back(job); }
  const std::vector<StagingProxy::Job>& jobs() const { return jobs_; }

 private:
  uint64_t* const control_;
  std::vector<StagingProxy::Job> jobs_;
};

}  // namespace hetccl
