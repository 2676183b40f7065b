// The ucx transport's links: HETCCL_UCX_LANES UCX workers per
// communicator (its lanes), each with its progress thread and an endpoint
// per peer, so each its own connection; workers' addresses exchanged over
// the communicator's out-of-band channel. Created collectively by every
// rank.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "transport/link.h"
#include "transport/transport.h"
#include "transport/ucx/ucx_link.h"
#include "transport/ucx/ucx_worker_thread.h"
#include "util/abort_signal.h"
#include "util/oob.h"

namespace hetccl {

constexpr int kMaxUcxLanes = 16;

class UcxLinkSet : public LinkSet {
 public:
  // Collective over `oob` (every rank calls it, even one without peers).
  // Only ranks with peers load UCX; when no rank has any, nothing is
  // loaded. Throws ncclSystemError on every rank if a rank with peers
  // cannot use UCX (naming it and, on that rank, why).
  // Rank 0's lanes (1..kMaxUcxLanes; 0: by cores) and part size (64 KiB..
  // 1 GiB) apply to every rank; the GPU policy is each rank's own: its side
  // of a link moves the same messages whether it stages its GPU buffers or
  // not.
  // `calls` (may be null) are this rank's, which a peer's call that no
  // receive claims yet is compared with.
  UcxLinkSet(Oob& oob, const std::vector<int>& peers,
             std::shared_ptr<AbortSignal> abort, UcxSettings settings = {},
             std::shared_ptr<const CallLog> calls = nullptr);
  // Stops the progress threads; pending transfers fail.
  ~UcxLinkSet() override;

  std::shared_ptr<Link> link(int peer) const override;
  // UCX workers, each with its progress thread (0 without peers).
  size_t lanes() const { return lanes_.size(); }

 private:
  const int rank_;
  std::vector<std::shared_ptr<UcxWorkerThread>> lanes_;
  std::map<int, std::shared_ptr<Link>> links_;
};

}  // namespace hetccl
