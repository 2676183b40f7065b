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
// Both ends place a transfer alike from its size alone.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace hetccl {

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

 private:
  size_t lanes_;
  size_t home_;
  size_t minPartBytes_;
  size_t maxPartBytes_;
};

}  // namespace hetccl
