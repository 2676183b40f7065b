// Buffers registered with a communicator (ncclCommRegister). CPU ranks need
// no registration on their data path; the handles are still tracked so that
// a wrong or repeated deregistration is reported.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace hetccl {

class Registrations {
 public:
  void* add(void* buffer, size_t bytes);
  // Throws ncclInvalidArgument for a handle this communicator did not give.
  void remove(void* handle);

 private:
  struct Range {
    void* buffer;
    size_t bytes;
  };
  std::mutex mutex_;
  std::unordered_map<void*, std::unique_ptr<Range>> ranges_;
};

}  // namespace hetccl
