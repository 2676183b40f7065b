// Chunked plans: one chunk's transfers across domains stay in flight while
// the next chunk starts, so the steps inside a domain overlap the slower
// steps across domains.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "algo/plan_context.h"

namespace hetccl {

using Transfers = std::vector<std::shared_ptr<TransferRequest>>;

// Elements per chunk for HETCCL_CHUNK bytes spread over `rows` rows.
size_t elementsPerChunk(const PlanContext& ctx, size_t elementBytes,
                        size_t rows = 1);

// For the chunks [offset, offset + n) of `count` elements: start(offset, n)
// posts the chunk's transfers; finish(offset, n) runs once they completed,
// after the next chunk has started.
void pipelineChunks(
    const PlanContext& ctx, size_t count, size_t perChunk,
    const std::function<Transfers(size_t offset, size_t n)>& start,
    const std::function<void(size_t offset, size_t n)>& finish);

}  // namespace hetccl
