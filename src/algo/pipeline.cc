#include "algo/pipeline.h"

#include <algorithm>

namespace hetccl {

size_t elementsPerChunk(size_t chunkBytes, size_t elementBytes, size_t rows) {
  return std::max<size_t>(
      1, chunkBytes / elementBytes / std::max<size_t>(1, rows));
}

size_t pointToPointPieceBytes(size_t chunkBytes, int nranks, size_t bytes,
                              bool fewPeers) {
  constexpr size_t kSmallest = 4096;
  const size_t share = chunkBytes / std::max(nranks, 1);
  const size_t floor = fewPeers ? std::min(std::max<size_t>(bytes, 1),
                                           crossDomainPieceBytes(chunkBytes))
                                : kSmallest;
  return std::max<size_t>(1, std::min(chunkBytes, std::max(share, floor)));
}

size_t crossDomainPieceBytes(size_t chunkBytes) {
  constexpr size_t kSmallest = 4096;
  return std::max(kSmallest, chunkBytes / 4);
}

void pipelineChunks(
    const PlanContext& ctx, size_t count, size_t perChunk,
    const std::function<Transfers(size_t offset, size_t n)>& start,
    const std::function<void(size_t offset, size_t n)>& finish) {
  struct Started {
    ChunkSpan chunk;
    Transfers transfers;
  };
  pipelineChunks(
      count, perChunk,
      [&](const ChunkSpan& chunk) {
        return Started{chunk, start(chunk.offset, chunk.n)};
      },
      [&](Started& started) {
        for (auto& transfer : started.transfers) ctx.wait(transfer);
        finish(started.chunk.offset, started.chunk.n);
      });
}

}  // namespace hetccl
