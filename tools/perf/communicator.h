// The rank's communicator of the library under test: created from the rank
// setup, destroyed
// when the run is over, aborted when the run ends in an error (so that the
// other ranks see the failure instead of waiting for this one).
#pragma once

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

 private:
  const NcclApi& nccl_;
  ncclComm_t comm_ = nullptr;
  double initSeconds_ = 0;
};

}  // namespace perf
}  // namespace hetccl
