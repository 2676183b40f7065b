// Several transfers that make up one: done when all of them are. A part
// that failed throws from done() and wait() at once; the parts still
// running belong to a link that is failing too (or to one the
// communicator's abort stops).
#pragma once

#include <memory>
#include <vector>

#include "transport/link.h"

namespace hetccl {

class RequestGroup : public TransferRequest {
 public:
  explicit RequestGroup(std::vector<std::shared_ptr<TransferRequest>> parts)
      : parts_(std::move(parts)) {}

  bool done() override;
  void wait(const AbortSignal& abort, double timeoutSeconds) override;
  // The peer of the first part not done (the parts of a pieced transfer
  // share one).
  int peer() const override;
  // The parts' (the pieces of a pieced transfer), which go one way.
  TransferWay way() const override;
  PieceCount pieces() const override;

 private:
  std::vector<std::shared_ptr<TransferRequest>> parts_;
  size_t next_ = 0;  // parts before it are done
};

// One request for `parts`: the part itself when there is one.
std::shared_ptr<TransferRequest> requestFor(
    std::vector<std::shared_ptr<TransferRequest>> parts);

}  // namespace hetccl
