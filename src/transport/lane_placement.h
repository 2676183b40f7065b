// Where a link of several lanes (tcp, ucx, net: each lane a thread of its
// own with its share of the connections) puts a transfer. It is cut into
// parts of at least `minPartBytes`, one per lane at most, and of at most
// `maxPartBytes` (several per lane for large transfers where that is
// set), and part k goes to lane (home + k) % lanes, where a pair's home
// lane is (rank + peer) % lanes at both ends. Every transfer's first part
// is thus on the home lane whatever its size: a run of small transfers
// finds that lane's thread awake (dealt to the lanes in turn, they found
// each lane's thread asleep by its turn:
// bench/results/tcp-home-lane-2026-12-06.md), and two ends that disagree
// about a size meet there and fail instead of waiting on different lanes.
// Both ends place a transfer alike from its size alone, so the smallest
// part is rank 0's, agreed when the link set starts.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "transport/transfer_piece.h"
#include "util/params.h"

namespace hetccl {

// The smallest part by default. A cross-domain transfer arrives as
// pieces of 256 KiB to 2 MiB (PiecedLink), each a transfer of the link,
// and every one starts on the home lane: the larger the smallest part,
// the fewer lanes a piece spreads over while the others idle. Where the
// rank has the cores for its lanes' threads, 64 KiB parts moved CPU ranks'
// 256 KiB-2 MiB collectives between pretend hosts on 16 cores 1.38-1.98x as
// fast as 128 KiB over tcp (12 lanes), and their 2 MiB ones 1.3-2.0x as
// fast as 256 KiB over UCX (4 lanes) and over a net plugin of 4 rails
// (bench/results/tcp-split-h100-2026-12-06.md,
// bench/results/ucx-net-split-h100-2026-12-06.md). With fewer cores the
// lanes' threads outnumber them, and each link keeps the size it was
// measured with there (`fewCoresBytes`).
constexpr int kManyCores = 8;
constexpr size_t kManyCoresSplitBytes = 64 * 1024;
inline size_t smallestPartForCores(int cores, size_t fewCoresBytes) {
  return cores >= kManyCores ? kManyCoresSplitBytes : fewCoresBytes;
}

// The least smallest part one may set.
constexpr size_t kMinSplitBytes = 4 * 1024;
// A link's smallest-part parameter (HETCCL_TCP_SPLIT, HETCCL_UCX_SPLIT,
// HETCCL_NET_SPLIT): 0, which leaves it to the cores, or at least
// kMinSplitBytes; throws ncclInvalidArgument for less.
size_t readSmallestPart(const ParamSpec& spec);

class LanePlacement {
 public:
  LanePlacement(int rank, int peer, size_t lanes, size_t minPartBytes,
                size_t maxPartBytes = SIZE_MAX)
      : lanes_(std::max<size_t>(1, lanes)),
        home_(static_cast<size_t>(rank + peer) % lanes_),
        minPartBytes_(std::max<size_t>(1, minPartBytes)),
        maxPartBytes_(std::max<size_t>(1, maxPartBytes)) {}

  size_t lanes() const { return lanes_; }
  size_t home() const { return home_; }
  // How many parts a transfer of `bytes` is cut into (at least 1).
  size_t partsOf(size_t bytes) const {
    const size_t filled = std::clamp<size_t>(bytes / minPartBytes_, 1, lanes_);
    const size_t capped = bytes / maxPartBytes_ + (bytes % maxPartBytes_ != 0);
    return std::max(filled, capped);
  }
  size_t laneOf(size_t part) const { return (home_ + part) % lanes_; }

  // A transfer's parts as placePiece puts them: part k on lane
  // (firstLane + k) % lanes.
  struct Parts {
    size_t count;
    size_t firstLane;
    size_t laneOf(size_t part, size_t lanes) const {
      return (firstLane + part) % lanes;
    }
  };
  // For links whose every part costs a message of its own (ucx, net): a
  // transfer goes as partsOf cuts it from the home lane, unless it is a
  // piece of a larger transfer that this would cut: then it goes whole (in
  // parts of at most maxPartBytes) from lane home + its index on, so that
  // the pieces of one transfer take the lanes in turn, a message each.
  // With 64 KiB parts (16 cores) the 256-512 KiB pieces of CPU ranks' 2 MiB
  // collectives between pretend hosts, cut over every lane, took 1.26-1.80x
  // as long as whole on a lane each, while a lone 128-256 KiB transfer cut
  // over lanes took up to 2.7x less time than whole
  // (bench/results/ucx-net-lane-turns-h200-2026-12-06.md). With 256 KiB
  // parts (few cores) a 256 KiB piece stays on the home lane: dealt to 4
  // lanes on 2 cores, 2 MiB collectives took up to 1.8x as long
  // (bench/results/ucx-net-pieces-2026-12-07.md).
  Parts placePiece(size_t bytes, TransferPiece piece) const {
    const size_t parts = partsOf(bytes);
    if (piece.count <= 1 || parts == 1) return {parts, home_};
    const size_t capped = bytes / maxPartBytes_ + (bytes % maxPartBytes_ != 0);
    return {std::max<size_t>(1, capped), (home_ + piece.index) % lanes_};
  }

 private:
  size_t lanes_;
  size_t home_;
  size_t minPartBytes_;
  size_t maxPartBytes_;
};

}  // namespace hetccl
