#include "engine/gpu/proxy/slot_runs.h"

namespace hetccl {
namespace {

// Whether piece `next` (after `previous`) continues `run`: its slot at the
// run's stride (the second piece sets it: forward, past the first), and
// as long as the others, or shorter where the run is back to back.
bool continues(const SlotRun& run, const StagedPiece& previous,
               const StagedPiece& next) {
  if (next.slot <= previous.slot) return false;  // the ring wrapped
  const auto stride = static_cast<size_t>(next.slot - previous.slot);
  if (stride < previous.bytes) return false;
  if (run.count > 1 && stride != run.pitch) return false;
  return next.bytes == run.width ||
         (next.bytes < run.width && stride == run.width);
}

}  // namespace

size_t runLength(size_t piecesPerCopy, uint64_t runsFrom, uint64_t waiting) {
  return waiting >= runsFrom ? piecesPerCopy : 1;
}

std::vector<SlotRun> slotRuns(const std::vector<StagedPiece>& pieces,
                              size_t maxPieces, RunEdge alone) {
  std::vector<SlotRun> runs;
  size_t offset = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const bool edge =
        alone == RunEdge::kFirstAlone ? i == 1 : i + 1 == pieces.size();
    SlotRun* run = runs.empty() ? nullptr : &runs.back();
    if (run && !edge && run->count < maxPieces &&
        run->bytes == run->count * run->width &&
        continues(*run, pieces[i - 1], pieces[i])) {
      run->pitch = static_cast<size_t>(pieces[i].slot - pieces[i - 1].slot);
      run->count += 1;
      run->bytes += pieces[i].bytes;
    } else {
      runs.push_back(SlotRun{i, 1, offset, pieces[i].bytes, pieces[i].bytes,
                             pieces[i].bytes});
    }
    offset += pieces[i].bytes;
  }
  return runs;
}

}  // namespace hetccl
