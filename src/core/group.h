// NCCL group semantics for the calling thread: between ncclGroupStart and
// ncclGroupEnd, operations (and communicator inits) are collected and then
// issued together, so that point-to-point ops complete in any posting order
// and one thread can drive several ranks.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "core/communicator.h"

namespace hetccl {

class Group {
 public:
  // The calling thread's group state (NCCL's groups are per thread).
  static Group& current();

  bool active() const { return depth_ > 0; }
  void start() { ++depth_; }
  // Closes one nesting level; the outermost issues everything collected.
  void end();
  // Closes the outermost group without issuing its work (for
  // ncclGroupSimulateEnd); returns the collected ops' total bytes and
  // stores their number in *ops.
  size_t discard(size_t* ops);

  void addOp(std::shared_ptr<Communicator> comm, const Op& op,
             StreamHandle stream);
  void addInit(std::function<void()> init);

 private:
  struct PendingOp {
    std::shared_ptr<Communicator> comm;
    Op op;
    StreamHandle stream;
  };
  void issueOps(std::vector<PendingOp> ops);

  int depth_ = 0;
  std::vector<PendingOp> ops_;
  std::vector<std::function<void()>> inits_;
};

// Runs the jobs on threads of their own and waits for all of them; rethrows
// the first error.
void runConcurrently(const std::vector<std::function<void()>>& jobs);

}  // namespace hetccl
