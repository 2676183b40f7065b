// NCCL group semantics for the calling thread: between ncclGroupStart and
// ncclGroupEnd, operations (and communicator inits) are collected and then
// issued together, so that point-to-point ops complete in any posting order
// and one thread can drive several ranks.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "core/communicator.h"
#include "util/error.h"

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
  // A call made inside the group failed: the outermost end fails with the
  // first such error and issues none of the group's operations, as NCCL's
  // groups do. (Issued without it, the rest could pass for complete: a
  // receive whose send was refused leaves its buffer as it was, and the
  // stream reports success.) Nothing outside a group.
  void callFailed(const Error& error);
  void addInit(std::shared_ptr<Communicator> comm, const ncclUniqueId& id);

 private:
  struct PendingOp {
    std::shared_ptr<Communicator> comm;
    Op op;
    StreamHandle stream;
  };
  struct PendingInit {
    std::shared_ptr<Communicator> comm;
    ncclUniqueId id;
  };
  static void runInits(const std::vector<PendingInit>& inits);
  void issueOps(std::vector<PendingOp> ops);

  int depth_ = 0;
  std::optional<Error> failure_;  // the first call of the group that failed
  std::vector<PendingOp> ops_;
  std::vector<PendingInit> inits_;
};

// Runs the jobs on threads of their own and waits for all of them; rethrows
// the first error. If a thread cannot be started, the run fails with that
// cause, and `stopStarted` (if given) runs before the started jobs are
// joined: jobs that wait for each other (the ranks of one communicator)
// would otherwise wait for the one that never started until they time out.
void runConcurrently(const std::vector<std::function<void()>>& jobs,
                     const std::function<void(const Error&)>& stopStarted = {});

}  // namespace hetccl
