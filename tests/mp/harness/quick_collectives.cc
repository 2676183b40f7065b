#include "harness/quick_collectives.h"

#include <vector>

#include "harness/check.h"
#include "harness/nccl_handles.h"
#include "hetccl.h"

namespace hetccl::mp {
namespace {

constexpr size_t kElements = 5;
constexpr double kSettleSeconds = 30;

void finish(ncclResult_t issued, ncclComm_t comm, cudaStream_t stream,
            const std::string& context) {
  MP_CHECK_NCCL(settle(issued, comm, kSettleSeconds)) << context;
  if (stream != nullptr) {
    MP_CHECK_NCCL(hetcclStreamSynchronize(stream)) << context;
  }
}

}  // namespace

void checkAllReduceSum(ncclComm_t comm, int64_t contribution,
                       int64_t expectedTotal, cudaStream_t stream,
                       const std::string& context) {
  std::vector<int64_t> send(kElements), recv(kElements, -1);
  for (size_t i = 0; i < kElements; ++i) {
    send[i] = contribution * static_cast<int64_t>(i + 1);
  }
  finish(ncclAllReduce(send.data(), recv.data(), kElements, ncclInt64, ncclSum,
                       comm, stream),
         comm, stream, context);
  for (size_t i = 0; i < kElements; ++i) {
    MP_CHECK(recv[i] == expectedTotal * static_cast<int64_t>(i + 1))
        << context << ": all-reduce element " << i << " is " << recv[i]
        << ", expected " << expectedTotal * static_cast<int64_t>(i + 1);
  }
}

std::vector<int64_t> allGatherOne(ncclComm_t comm, int64_t mine,
                                  const std::string& context) {
  int count = 0;
  MP_CHECK_NCCL(ncclCommCount(comm, &count)) << context;
  std::vector<int64_t> all(count, -1);
  finish(ncclAllGather(&mine, all.data(), 1, ncclInt64, comm, nullptr), comm,
         nullptr, context);
  return all;
}

}  // namespace hetccl::mp
