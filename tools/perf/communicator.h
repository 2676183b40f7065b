// The rank's communicator of the library under test: created from the rank
// setup, destroyed
// when the run is over, aborted when the run ends in an error (so that the
// other ranks see the failure instead of waiting for this one).
#pragma once

#include <exception>

#include "perf/nccl_api.h"
#include "perf/rank_env.h"

namespace hetccl {
namespace perf {

class Communicator {
 public:
  Communicator(const NcclApi& nccl, const RankSetup& setup);
  ~Communicator();  // aborts unless destroy() ran
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  ncclComm_t get() const { return comm_; }
  double initSeconds() const { return initSeconds_; }
  // Destroys the communicator; throws on an error.
  void destroy();
  // Aborts it now, releasing its streams (nothing once destroyed or
  // aborted).
  void abort();

 private:
  const NcclApi& nccl_;
  ncclComm_t comm_ = nullptr;
  double initSeconds_ = 0;
};

// Aborts the communicator when the scope it guards is left by an exception.
// Declared after whatever holds GPU memory, it runs before that is freed: a
// failed run's streams wait until the communicator is aborted (as NCCL's
// do), and freeing GPU memory waits for every stream.
class AbortOnException {
 public:
  explicit AbortOnException(Communicator& communicator)
      : communicator_(communicator), uncaught_(std::uncaught_exceptions()) {}
  ~AbortOnException() {
    if (std::uncaught_exceptions() > uncaught_) communicator_.abort();
  }
  AbortOnException(const AbortOnException&) = delete;
  AbortOnException& operator=(const AbortOnException&) = delete;

 private:
  Communicator& communicator_;
  const int uncaught_;
};

}  // namespace perf
}  // namespace hetccl
