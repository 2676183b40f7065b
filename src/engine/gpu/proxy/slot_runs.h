// Which pieces of a staged transfer one staging copy moves together. A
// copy per piece costs a staging stream three operations (a wait, the
// copy, a counter write), and a stream holds about 1,020 before the
// enqueue makes the caller wait (bench/gpu_queue_depth.cu): a 256 MB
// all-reduce between two hosts enqueues about 380 per staging stream, so
// five such launches back to back held the caller for half their time.
// Pieces in slots that follow each other in the ring at an even stride
// (no wrap between them) go as one run: one wait for the run's last slot
// (a send) or piece (a receive), one copy, one counter write that passes
// them all. Where the pieces fill their slots the copy is a plain one;
// where the slots are larger (a ring that once carried larger pieces) it
// is a 2D copy, a row per piece, and the pieces must then be as long as
// each other.
//
// A run coarsens the pipeline: the proxy sees none of a send's run until
// all of it is copied, and a receive's run is copied out (and its slots
// freed) only once all of it has arrived. So a send's first piece goes
// alone (the network starts after one piece's copy), and so does a
// receive's last one (the plan waits for one piece's copy after the last
// byte arrives); a run takes at most half the ring's slots. Even so, runs
// cost busbw between pretend hosts on an H100
// (bench/results/staged-copy-runs-measured-h100-2026-12-05.md), so they
// are off by default, and where on, a transfer goes in runs only while
// its lane's staging stream lags (runLength): when the queue would fill.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hetccl {

// One piece as posted: its slot and length.
struct StagedPiece {
  char* slot;
  size_t bytes;
};

// Pieces [first, first + count) of a transfer, `bytes` in all, from
// `offset` of its GPU buffer; in the ring, each `pitch` bytes after the
// one before, from the first piece's slot on. Every piece but a plain
// run's last is `width` bytes.
struct SlotRun {
  size_t first;
  size_t count;
  size_t offset;
  size_t bytes;
  size_t width;
  size_t pitch;
  // Whether the pieces lie back to back in the ring: one plain copy.
  bool plain() const { return count == 1 || pitch == width; }
};

enum class RunEdge {
  kFirstAlone,  // a send's: the network starts after one piece
  kLastAlone,   // a receive's: the plan waits for one piece's copy
};

// The most pieces a copy takes (of at most `piecesPerCopy`) where
// `waiting` of the lane's pieces wait for its staging stream: runs from
// `runsFrom` on, one piece at a time below.
size_t runLength(size_t piecesPerCopy, uint64_t runsFrom, uint64_t waiting);

// Cuts a transfer's pieces (in order, back to back in the GPU buffer)
// into runs of at most `maxPieces` (1: a run per piece).
std::vector<SlotRun> slotRuns(const std::vector<StagedPiece>& pieces,
                              size_t maxPieces, RunEdge alone);

}  // namespace hetccl
