// The ucx transport's links: one UCX worker with its progress thread per
// communicator, an endpoint per peer, workers' addresses exchanged over the
// communicator's out-of-band channel. Created collectively by every rank.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "transport/link.h"
#include "transport/transport.h"
#include "transport/ucx/ucx_engine.h"
#include "util/abort_signal.h"
#include "util/oob.h"

namespace hetccl {

class UcxLinkSet : public LinkSet {
 public:
  // Collective over `oob` (every rank calls it, even one without peers).
  // Only ranks with peers load UCX; when no rank has any, nothing is
  // loaded. Throws ncclSystemError on every rank if a rank with peers
  // cannot use UCX (naming it and, on that rank, why).
  UcxLinkSet(Oob& oob, const std::vector<int>& peers,
             std::shared_ptr<AbortSignal> abort);
  // Stops the progress thread; pending transfers fail.
  ~UcxLinkSet() override;

  std::shared_ptr<Link> link(int peer) const override;

 private:
  const int rank_;
  std::shared_ptr<UcxEngine> engine_;
  std::map<int, std::shared_ptr<Link>> links_;
};

}  // namespace hetccl
