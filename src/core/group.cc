#include "core/group.h"

#include <exception>
#include <optional>
#include <thread>

#include "op/library_features.h"
#include "util/dtype.h"
#include "util/error.h"
#include "util/log.h"

namespace hetccl {

Group& Group::current() {
  thread_local Group group;
  return group;
}

void runConcurrently(const std::vector<std::function<void()>>& jobs,
                     const std::function<void(const Error&)>& stopStarted) {
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
  if (startFailure && stopStarted) {
    try {
      stopStarted(*startFailure);
    } catch (...) {  // the started threads must be joined all the same
      LOG_WARN(kLogInit, "stopping the jobs started failed: %s",
               currentExceptionAsError().what());
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

void Group::callFailed(const Error& error) {
  if (active() && !failure_) failure_ = error;
}

void Group::addInit(std::shared_ptr<Communicator> comm,
                    const ncclUniqueId& id) {
  inits_.push_back({std::move(comm), id});
}

// Grouped inits may be ranks of one communicator, which wait for each
// other: if one cannot start, the started ones stop at once.
void Group::runInits(const std::vector<PendingInit>& inits) {
  std::vector<std::function<void()>> jobs;
  for (const PendingInit& init : inits)
    jobs.push_back([&init] { init.comm->initialize(init.id); });
  runConcurrently(jobs, [&](const Error& why) {
    for (const PendingInit& init : inits) init.comm->stopInit(why.what());
  });
}

void Group::end() {
  if (depth_ == 0)
    fail(ncclInvalidUsage, "ncclGroupEnd called without ncclGroupStart");
  if (--depth_ > 0) return;
  auto inits = std::move(inits_);
  auto ops = std::move(ops_);
  std::optional<Error> failure = std::move(failure_);
  inits_.clear();
  ops_.clear();
  failure_.reset();
  if (!inits.empty()) runInits(inits);
  if (failure)
    throw Error(failure->code(),
                format("a call of the group failed, so none of its %zu "
                       "operation(s) was issued: %s",
                       ops.size(), failure->what()));
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
  failure_.reset();
  return bytes;
}

namespace {

// The groups of the vendor libraries that several communicators of one
// HetCCL group hand their work to, ended on every path (a library's
// groups must balance).
class LibraryGroups {
 public:
  LibraryGroups() = default;
  ~LibraryGroups() {
    try {
      end();
    } catch (const Error&) {
      // Already failing: the first error is the one reported.
    }
  }
  LibraryGroups(const LibraryGroups&) = delete;
  LibraryGroups& operator=(const LibraryGroups&) = delete;

  void start(LibraryFeatures* library) {
    library->groupStart();
    started_.push_back(library);
  }
  // Ends them, the last started first.
  void end() {
    while (!started_.empty()) {
      LibraryFeatures* library = started_.back();
      started_.pop_back();
      library->groupEnd();
    }
  }

 private:
  std::vector<LibraryFeatures*> started_;
};

// The libraries that two or more of the communicators hand their work to.
std::vector<LibraryFeatures*> sharedLibraries(
    const std::vector<LibraryFeatures*>& features) {
  std::vector<LibraryFeatures*> shared;
  for (size_t i = 0; i < features.size(); ++i) {
    bool again = false, seen = false;
    for (size_t j = 0; j < features.size(); ++j) {
      if (j == i || features[j]->library() != features[i]->library()) continue;
      (j < i ? seen : again) = true;
    }
    if (again && !seen) shared.push_back(features[i]);
  }
  return shared;
}

// One communicator's part of a group.
struct Batch {
  std::shared_ptr<Communicator> comm;
  StreamHandle stream;
  std::vector<Op> ops;
};

// HETCCL_CHECK_CALLS: every communicator's calls are posted before any is
// verified, and the verifications run side by side, since this thread may
// drive several ranks of one communicator, which wait for each other.
void checkCalls(const std::vector<Batch*>& batches) {
  std::vector<std::function<void()>> verifications;
  for (Batch* b : batches) {
    if (!b->comm->checksCalls()) continue;
    b->comm->postCalls(b->ops);
    verifications.push_back([b] { b->comm->verifyCalls(b->ops); });
  }
  if (!verifications.empty()) runConcurrently(verifications);
}

}  // namespace

// One launch per communicator, with its ops in call order. Communicators
// of one vendor library are launched from this thread inside one group of
// that library (its groups are per thread), so that it connects and
// launches them together. Other launches on streams return at once; ranks
// whose work runs inline (NULL host streams) must run side by side, or one
// would wait forever for the next.
void Group::issueOps(std::vector<PendingOp> ops) {
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
  std::vector<Batch*> vendorBatches;
  std::vector<LibraryFeatures*> vendorLibraries;
  std::vector<std::function<void()>> launches;
  bool anyInline = false;
  for (Batch& b : batches) {
    if (LibraryFeatures* features = b.comm->libraryFeatures()) {
      vendorBatches.push_back(&b);
      vendorLibraries.push_back(features);
      continue;
    }
    anyInline |= b.stream == nullptr;
    launches.push_back([&b] { b.comm->launch(b.ops, b.stream); });
  }
  checkCalls(vendorBatches);
  {
    LibraryGroups grouped;
    for (LibraryFeatures* library : sharedLibraries(vendorLibraries))
      grouped.start(library);
    for (Batch* b : vendorBatches) b->comm->launchUnchecked(b->ops, b->stream);
    grouped.end();
  }
  if (anyInline) {
    runConcurrently(launches);
  } else {
    for (auto& launch : launches) launch();
  }
}

}  // namespace hetccl
