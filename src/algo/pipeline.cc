#include "algo/pipeline.h"

#include <algorithm>

namespace hetccl {

size_t elementsPerChunk(const PlanContext& ctx, size_t elementBytes,
                        size_t rows) {
  return std::max<size_t>(
      1, ctx.chunkBytes / elementBytes / std::max<size_t>(1, rows));
}

void pipelineChunks(
    const PlanContext& ctx, size_t count, size_t perChunk,
    const std::function<Transfers(size_t offset, size_t n)>& start,
    const std::function<void(size_t offset, size_t n)>& finish) {
  struct Chunk {
    size_t offset, n;
    Transfers transfers;
  };
  std::unique_ptr<Chunk> inFlight;
  for (size_t offset = 0;; offset += perChunk) {
    std::unique_ptr<Chunk> started;
    if (offset < count) {
      size_t n = std::min(perChunk, count - offset);
      started.reset(new Chunk{offset, n, start(offset, n)});
    }
    if (inFlight) {
      for (auto& transfer : inFlight->transfers) ctx.wait(*transfer);
      finish(inFlight->offset, inFlight->n);
    }
    if (!started) return;
    inFlight = std::move(started);
  }
}

}  // namespace hetccl
