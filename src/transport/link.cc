#include "transport/link.h"

#include "util/error.h"

namespace hetccl {

bool Link::movesGpuMemory(MemoryKind) const { return false; }

std::string Link::whyStagesGpuMemory(MemoryKind) const { return {}; }

std::string Link::gpuMemoryPath(MemoryKind) const {
  return "staged through host memory (the transport carries host memory "
         "only)";
}

std::shared_ptr<TransferRequest> Link::sendGpu(MemoryKind, const void*,
                                               size_t bytes,
                                               const CallSignature&,
                                               TransferPiece) {
  fail(ncclInternalError,
       "a send of %zu bytes of GPU memory to rank %d on a link that moves "
       "host memory only",
       bytes, peer());
}

std::shared_ptr<TransferRequest> Link::recvGpu(MemoryKind, void*, size_t bytes,
                                               const CallSignature&,
                                               TransferPiece) {
  fail(ncclInternalError,
       "a receive of %zu bytes of GPU memory from rank %d on a link that "
       "moves host memory only",
       bytes, peer());
}

std::shared_ptr<TransferRequest> Link::recvReduce(void*, const void*,
                                                  size_t bytes,
                                                  const ReceiveCombine&,
                                                  const CallSignature&,
                                                  TransferPiece) {
  fail(ncclInternalError,
       "a receive of %zu bytes to combine as they arrive from rank %d, on a "
       "link that does not",
       bytes, peer());
}

}  // namespace hetccl
