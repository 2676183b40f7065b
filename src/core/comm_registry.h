// The live communicators of this process. An ncclComm_t is only ever
// dereferenced after it was found here, so a destroyed or foreign handle is
// reported as an invalid argument rather than followed.
#pragma once

#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/communicator.h"

struct ncclComm;

namespace hetccl {

class CommRegistry {
 public:
  static CommRegistry& instance();

  ncclComm* add(std::shared_ptr<Communicator> comm);
  // Throws ncclInvalidArgument for NULL, destroyed or unknown handles.
  std::shared_ptr<Communicator> find(const ncclComm* handle) const;
  // Every communicator not destroyed yet.
  std::vector<std::shared_ptr<Communicator>> live() const;
  // Removes the handle; the communicator lives on while work holds it.
  std::shared_ptr<Communicator> remove(const ncclComm* handle);

 private:
  mutable std::mutex mutex_;
  std::unordered_map<const ncclComm*, std::shared_ptr<Communicator>> comms_;
};

}  // namespace hetccl
