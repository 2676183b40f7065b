#include "core/group.h"

#include <exception>
#include <optional>
#include <thread>

#include "util/dtype.h"
#include "util/error.h"

namespace hetccl {

Group& Group::current() {
  thread_local Group group;
  return group;
}

void runConcurrently(const std::vector<std::function<void()>>& jobs) {
  if (jobs.size() == 1) return jobs[0]();
  std::vector<std::exception_ptr> errors(jobs.size());
  std::vector<std::thread> threads;
  // A thread that cannot be started (no memory, a thread limit) fails the
  // whole run, but only once the threads already started have ended: a
  // joinable thread must not be destroyed.
  std::optional<Error> startFailure;
  for (size_t i = 0; i < jobs.size() && !startFailure; ++i) {
    try {
      threads.emplace_back([&, i] {
        try {
          jobs[i]();
        } catch (...) {
          errors[i] = std::current_exception();
        }
      });
    } catch (...) {
      startFailure =
          Error(ncclSystemError,
                format("cannot start a thread for job %zu of %zu: "
                       "%s",
                       i + 1, jobs.size(), currentExceptionAsError().what()));
    }
  }
  for (auto& thread : threads) thread.join();
  if (startFailure) throw *startFailure;
  for (auto& error : errors)
    if (error) std::rethrow_exception(error);
}

void Group::addOp(std::shared_ptr<Communicator> comm, const Op& op,
                  StreamHandle stream) {
  ops_.push_back({std::move(comm), op, stream});
}

void Group::addInit(std::function<void()> init) {
  inits_.push_back(std::move(init));
}

void Group::end() {
  if (depth_ == 0)
    fail(ncclInvalidUsage, "ncclGroupEnd called without ncclGroupStart");
  if (--depth_ > 0) return;
  auto inits = std::move(inits_);
  auto ops = std::move(ops_);
  inits_.clear();
  ops_.clear();
  if (!inits.empty()) runConcurrently(inits);
  if (!ops.empty()) issueOps(std::move(ops));
}

size_t Group::discard(size_t* ops) {
  *ops = 0;
  if (depth_ == 0)
    fail(ncclInvalidUsage,
         "ncclGroupSimulateEnd called without ncclGroupStart");
  if (--depth_ > 0) return 0;
  size_t bytes = 0;
  for (const PendingOp& pending : ops_)
    bytes += pending.op.count * dtypeSize(pending.op.dtype);
  *ops = ops_.size();
  ops_.clear();
  inits_.clear();
  return bytes;
}

// One launch per communicator, with its ops in call order. Launches on
// streams return at once; ranks whose work runs inline (NULL host streams)
// must run side by side, or one would wait forever for the next.
void Group::issueOps(std::vector<PendingOp> ops) {
  struct Batch {
    std::shared_ptr<Communicator> comm;
    StreamHandle stream;
    std::vector<Op> ops;
  };
  std::vector<Batch> batches;
  for (PendingOp& pending : ops) {
    Batch* batch = nullptr;
    for (Batch& b : batches)
      if (b.comm == pending.comm) batch = &b;
    if (batch == nullptr) {
      batches.push_back({pending.comm, pending.stream, {}});
      batch = &batches.back();
    }
    if (batch->stream != pending.stream)
      fail(ncclInvalidUsage,
           "a group uses rank %d's communicator on two streams (%p and %p); "
           "HetCCL needs one stream per communicator in a group",
           pending.comm->rank(), static_cast<void*>(batch->stream),
           static_cast<void*>(pending.stream));
    batch->ops.push_back(pending.op);
  }
  bool anyInline = false;
  for (const Batch& b : batches) anyInline |= b.stream == nullptr;
  std::vector<std::function<void()>> launches;
  for (Batch& b : batches)
    launches.push_back([&b] { b.comm->launch(b.ops, b.stream); });
  if (anyInline) {
    runConcurrently(launches);
  } else {
    for (auto& launch : launches) launch();
  }
}

}  // namespace hetccl
