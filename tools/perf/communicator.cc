#include "perf/communicator.h"

#include <chrono>

#include "perf/perf_error.h"

namespace hetccl {
namespace perf {

Communicator::Communicator(const RankSetup& setup) {
  const auto start = std::chrono::steady_clock::now();
  checkNccl(ncclCommInitRank(&comm_, setup.nranks, setup.id, setup.rank),
            "ncclCommInitRank", nullptr);
  initSeconds_ =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
}

Communicator::~Communicator() {
  if (comm_) ncclCommAbort(comm_);
}

void Communicator::destroy() {
  ncclComm_t comm = comm_;
  comm_ = nullptr;
  checkNccl(ncclCommDestroy(comm), "ncclCommDestroy", nullptr);
}

}  // namespace perf
}  // namespace hetccl
