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
#include "transport/ucx/ucx_engine.h"
#include "transport/ucx/ucx_link.h"
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
  // `lanes` (1..kMaxUcxLanes, 0: by cores) and `partBytes` (the largest
  // part of a cut transfer, 64 KiB..1 GiB): rank 0's apply to every rank.
  UcxLinkSet(Oob& oob, const std::vector<int>& peers, int lanes,
             std::shared_ptr<AbortSignal> abort,
             size_t partBytes = kUcxPartBytes);
  // Stops the progress threads; pending transfers fail.
  ~UcxLinkSet() override;

  std::shared_ptr<Link> link(int peer) const override;
  // UCX workers, each with its progress thread (0 without peers).
  size_t lanes() const { return lanes_.size(); }

 private:
  const int rank_;
  std::vector<std::shared_ptr<UcxEngine>> lanes_;
  std::map<int, std::shared_ptr<Link>> links_;
};

}  // namespace hetccl
