// Where a transfer stands in a larger one that was cut into pieces, each
// a transfer of the link (PiecedLink, the GPU engine's staging): piece
// `index` of `count`; a transfer on its own is piece 0 of 1. Both ends cut
// a transfer alike, so a link of several lanes may place a piece by it:
// the pieces of one transfer whole on lanes in turn, where it cuts a lone
// transfer over its lanes (lane_placement.h).
#pragma once

#include <cstdint>

namespace hetccl {

struct TransferPiece {
  uint32_t index = 0;
  uint32_t count = 1;
};

}  // namespace hetccl
