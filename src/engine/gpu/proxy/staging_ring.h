// One direction of a staged link: a ring of pinned host slots that the
// GPU engine's stream and the staging proxy hand to each other, the way a
// GPU and a network proxy share a FIFO. Pieces of the link's transfers
// take the slots in turn (piece n: slot n % slots), and two counters in
// the same pinned memory say how far each side got:
//   sends:    the stream copies piece n into its slot and raises `stream`
//             to n + 1; the proxy sends it and raises `proxy` to n + 1,
//             which frees the slot for piece n + slots;
//   receives: the proxy receives piece n into its slot once `stream` says
//             piece n - slots was copied out, then raises `proxy`; the
//             stream waits for that, copies the piece to the GPU and raises
//             `stream`.
// The stream waits on `proxy` with stream memory operations, and the proxy
// polls `stream`: neither side ever makes the other's thread call into the
// GPU runtime. The slots are pinned as large as the pieces need
// (slot_sizes.h), when the engine posts them: a piece's job carries its
// slot's address to the proxy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "engine/gpu/proxy/slot_sizes.h"
#include "runtime/device/device_resources.h"

namespace hetccl {

class StagingRing {
 public:
  // `counters`: two words of pinned memory, which the caller keeps for as
  // long as the ring; set to 0 here. Pieces of at most `largestPiece`.
  StagingRing(const DeviceModule& module, size_t largestPiece, size_t slots,
              uint64_t* counters);

  size_t slots() const { return sizes_.slots(); }
  // The slot of `piece`, which holds `bytes`: the ring's slots are pinned,
  // or pinned larger, now where they are smaller. The engine's thread
  // only, when it posts the piece.
  char* slotFor(uint64_t piece, size_t bytes);
  size_t pinnedBytes() const { return sizes_.pinnedBytes(); }

  // Raised by the engine's stream (writeValue64); read by the proxy.
  uint64_t* streamCounter() const { return &counters_[0]; }
  // Raised by the proxy; waited on by the stream (waitValue64).
  uint64_t* proxyCounter() const { return &counters_[1]; }
  uint64_t streamDone() const {
    return __atomic_load_n(streamCounter(), __ATOMIC_ACQUIRE);
  }
  void raiseProxyCounter(uint64_t value) const;

 private:
  const DeviceModule& module_;
  SlotSizes sizes_;
  // Every size of slots pinned, the last one in use: the former ones may
  // still hold earlier pieces, or be a captured graph's.
  std::vector<PinnedHostMemory> memory_;
  uint64_t* const counters_;
};

// The rings of every staged link of an engine, made on first use and kept
// until the engine goes (after its links: a failed link may still write
// into a slot until its transport stops), and their counters: four words
// per link in pinned pages, its sends' ring's two and its receives', so
// that one step of a stream puts both back to 0.
class StagingRings {
 public:
  static constexpr size_t kLinkCounters = 4;

  explicit StagingRings(const DeviceModule& module)
      : module_(module), zeros_(takeWords(kLinkCounters)) {}
  // A link's kLinkCounters words, 0.
  uint64_t* linkCounters() { return takeWords(kLinkCounters); }
  // kLinkCounters words that stay 0, to copy from.
  const uint64_t* zeros() const { return zeros_; }
  // `counters`: two of a link's words.
  StagingRing& make(size_t largestPiece, size_t slots, uint64_t* counters);
  // The slots' memory pinned by every ring (the engine's thread, which
  // grows them).
  size_t pinnedBytes();
  // Raises every ring's proxy counter to the maximum: every stream wait
  // on the rings ends.
  void releaseWaits();
  // Enqueues on `stream` writes that set every ring's counters to 0.
  void zeroCounters(void* stream);

 private:
  uint64_t* takeWords(size_t count);

  const DeviceModule& module_;
  std::mutex mutex_;
  std::vector<PinnedHostMemory> counterPages_;
  size_t wordsTaken_ = 0;  // of the last page
  const uint64_t* const zeros_;
  std::vector<std::unique_ptr<StagingRing>> rings_;
};

}  // namespace hetccl
