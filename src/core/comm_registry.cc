#include "core/comm_registry.h"

#include <cstdlib>
#include <mutex>
#include <vector>

#include "core/communicator.h"
#include "util/error.h"
#include "util/log.h"

namespace hetccl {
namespace {

// A process that exits without destroying its communicators: their GPU
// streams must not hold the exit, and their peers must learn whether this
// rank left after its last operation or in the middle of one.
void leaveEveryCommunicatorAtExit() {
  for (const auto& comm : CommRegistry::instance().live()) {
    try {
      comm->leaveAtExit();
    } catch (...) {
      LOG_WARN(kLogInit, "rank %d: leaving at exit: %s", comm->rank(),
               currentExceptionAsError().what());
    }
  }
}

}  // namespace

CommRegistry& CommRegistry::instance() {
  // Never destroyed: handles may be used from threads still running at exit.
  static CommRegistry* registry = new CommRegistry;
  return *registry;
}

ncclComm* CommRegistry::add(std::shared_ptr<Communicator> comm) {
  static std::once_flag atExit;
  std::call_once(atExit, [] { std::atexit(leaveEveryCommunicatorAtExit); });
  auto* handle = reinterpret_cast<ncclComm*>(comm.get());
  std::lock_guard<std::mutex> lock(mutex_);
  comms_.emplace(handle, std::move(comm));
  return handle;
}

std::shared_ptr<Communicator> CommRegistry::find(const ncclComm* handle) const {
  HETCCL_CHECK_ARG(handle != nullptr, "communicator is NULL");
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = comms_.find(handle);
  if (it == comms_.end())
    fail(ncclInvalidArgument,
         "communicator %p is not valid: it was never created, or was "
         "already destroyed",
         static_cast<const void*>(handle));
  return it->second;
}

std::vector<std::shared_ptr<Communicator>> CommRegistry::live() const {
  std::vector<std::shared_ptr<Communicator>> comms;
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& entry : comms_) comms.push_back(entry.second);
  return comms;
}

std::shared_ptr<Communicator> CommRegistry::remove(const ncclComm* handle) {
  std::shared_ptr<Communicator> comm = find(handle);
  std::lock_guard<std::mutex> lock(mutex_);
  comms_.erase(handle);
  return comm;
}

}  // namespace hetccl
