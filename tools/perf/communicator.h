// The rank's HetCCL communicator: created from the rank setup, destroyed
// when the run is over, aborted when the run ends in an error (so that the
// other ranks see the failure instead of waiting for this one).
#pragma once

#include "nccl.h"
#include "perf/rank_env.h"

namespace hetccl {
namespace perf {

class Communicator {
 public:
  explicit Communicator(const RankSetup& setup);
  ~Communicator();  // aborts unless destroy() ran
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  ncclComm_t get() const { return comm_; }
  double initSeconds() const { return initSeconds_; }
  // Destroys the communicator; throws on an error.
  void destroy();

 private:
  ncclComm_t comm_ = nullptr;
  double initSeconds_ = 0;
};

}  // namespace perf
}  // namespace hetccl
