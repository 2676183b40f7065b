#include "perf/communicator.h"

#include <chrono>

namespace hetccl {
namespace perf {

Communicator::Communicator(const NcclApi& nccl, const RankSetup& setup)
    : nccl_(nccl) {
  const auto start = std::chrono::steady_clock::now();
  nccl_.check(nccl_.commInitRank(&comm_, setup.nranks, setup.id, setup.rank),
              "ncclCommInitRank", nullptr);
  initSeconds_ =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
}

Communicator::~Communicator() { abort(); }

void Communicator::abort() {
  ncclComm_t comm = comm_;
  comm_ = nullptr;
  if (comm) nccl_.commAbort(comm);
}

void Communicator::destroy() {
  ncclComm_t comm = comm_;
  comm_ = nullptr;
  nccl_.check(nccl_.commDestroy(comm), "ncclCommDestroy", nullptr);
}

}  // namespace perf
}  // namespace hetccl
