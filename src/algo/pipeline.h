// Chunked plans: one chunk's transfers across domains stay in flight while
// the next chunk starts, so the steps inside a domain overlap the slower
// steps across domains.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "algo/plan_context.h"

namespace hetccl {

using Transfers = std::vector<std::shared_ptr<TransferRequest>>;

// Elements per chunk for chunks of `chunkBytes` spread over `rows` rows.
size_t elementsPerChunk(size_t chunkBytes, size_t elementBytes,
                        size_t rows = 1);

// The pieces a point-to-point transfer of `bytes` across domains is cut
// into (the last one shorter): HETCCL_CHUNK / nranks (at least 4 KiB), so
// that a round to and from every rank stays within two chunks. A group
// that reaches only a few peers (a user's sends and receives) cuts no
// smaller than a piece of the links (crossDomainPieceBytes) or the whole
// transfer: on many ranks the share alone shrinks to a few kilobytes a
// piece, each paying the link's and the staging's cost per piece.
size_t pointToPointPieceBytes(size_t chunkBytes, int nranks, size_t bytes,
                              bool fewPeers);

// The pieces transfers across domains are cut into (pieced_link.h): a
// quarter chunk, so that a chunk's transfer is on the wire while the next
// piece is staged, and at least 4 KiB.
size_t crossDomainPieceBytes(size_t chunkBytes);

// Chunk `index` holds elements [offset, offset + n).
struct ChunkSpan {
  size_t index;
  size_t offset;
  size_t n;
};

// The loop under every chunked plan, for the chunks of `count` elements:
// start(chunk) returns the chunk's state (its transfers in flight),
// finish(state) completes it, after the next chunk has started. At most
// two chunks are in flight, so chunk.index % 2 picks a scratch half.
template <typename Start, typename Finish>
void pipelineChunks(size_t count, size_t perChunk, Start start, Finish finish) {
  using State = std::invoke_result_t<Start&, const ChunkSpan&>;
  std::optional<State> inFlight;
  for (size_t index = 0, offset = 0;; ++index, offset += perChunk) {
    std::optional<State> started;
    if (offset < count)
      started.emplace(
          start(ChunkSpan{index, offset, std::min(perChunk, count - offset)}));
    if (inFlight) finish(*inFlight);
    if (!started) return;
    inFlight = std::move(started);
  }
}

// The same, for chunks whose state is their transfers: start(offset, n)
// posts them; finish(offset, n) runs once they completed.
void pipelineChunks(
    const PlanContext& ctx, size_t count, size_t perChunk,
    const std::function<Transfers(size_t offset, size_t n)>& start,
    const std::function<void(size_t offset, size_t n)>& finish);

}  // namespace hetccl
