#include "core/comm_registry.h"

#include "util/error.h"

namespace hetccl {

CommRegistry& CommRegistry::instance() {
  // Never destroyed: handles may be used from threads still running at exit.
  static CommRegistry* registry = new CommRegistry;
  return *registry;
}

ncclComm* CommRegistry::add(std::shared_ptr<Communicator> comm) {
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

std::shared_ptr<Communicator> CommRegistry::remove(const ncclComm* handle) {
  std::shared_ptr<Communicator> comm = find(handle);
  std::lock_guard<std::mutex> lock(mutex_);
  comms_.erase(handle);
  return comm;
}

}  // namespace hetccl
