// The format of a shm-transport segment. Each rank creates one segment
// holding, for every peer it links to, a region with the ring of slots it
// sends through and the counters it writes. A rank writes only into its
// own segment; its peers read it. The segment describes itself (a header
// and a table of regions by peer rank), so a peer needs only its name and
// size, and each sender may choose its own ring geometry: both ends of a
// direction use the geometry stored in the sender's segment.
//
//   header | peer table | region(peer a) | region(peer b) | ...
//   region: control (counter, mismatch reports) | slot 0 | slot 1 | ...
//   slot:   slot header (filled flag, message sequence and bytes, the
//           digest of the call it belongs to, a small chunk inline) |
//           the call's signature | chunk bytes
#pragma once

#include "shm/shm_counter.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "op/call_signature.h"
#include "transport/shm/shm_link_settings.h"

namespace hetccl {

// The counters a rank writes about its link to one peer.
struct ShmLinkControl {
  // Chunks the owner has consumed from the peer's ring to it.
  ShmCounter consumed;
  // 0, or 1 + the sequence number of a message from the peer whose size
  // did not match the owner's receive; the two sizes are stored first.
  ShmCounter mismatch;
  struct alignas(64) {
    uint64_t postedBytes;  // the owner's receive
    uint64_t sentBytes;    // the peer's message
  } mismatchSizes;
  // 1 once the owner found that a message of the peer belongs to a call
  // that disagrees with its own; the two calls are stored first.
  ShmCounter disagreement;
  struct alignas(64) {
    CallSignature sent;    // the peer's, from the message
    CallSignature posted;  // the owner's
  } disagreementCalls;
};

// A chunk of at most this many bytes travels inside its slot's header.
constexpr size_t kShmInlineBytes = 32;

// Precedes every chunk, in the one cache line the receiver polls: the
// flag that the slot holds the chunk, which message the chunk belongs to
// and how long that whole message is (so that a receiver can check the
// sizes agree), a digest of the call the message belongs to (so that it
// can check the calls agree), and a small chunk itself. The sender stores
// the flag last (release), so a receiver that sees it sees the rest: a
// small message reaches its receiver in one cache line and one poll, and
// no separate counter is read first (the shm link's low-latency protocol).
struct alignas(64) ShmSlotHeader {
  std::atomic<uint64_t> filled;  // 1 + the number of the chunk it holds
  uint64_t sequence;
  uint64_t messageBytes;
  uint64_t callDigest;  // shmCallDigest of the message's call
  char inlineChunk[kShmInlineBytes];
};
static_assert(sizeof(ShmSlotHeader) == 64, "a slot header is one line");

// The whole signature of the chunk's call, on the line after the header:
// read only when the digests differ (or when nothing of this rank waits
// for the message), so that the receiver's poll stays one line.
struct alignas(64) ShmSlotCall {
  CallSignature call;
};

// 64 bits of a signature, compared in the header line.
uint64_t shmCallDigest(const CallSignature& call);

// One ring as seen by either end: the sender's region for its peer.
class ShmRingView {
 public:
  ShmRingView() = default;
  ShmRingView(char* region, size_t slots, size_t chunkBytes);

  ShmLinkControl& control() const {
    return *reinterpret_cast<ShmLinkControl*>(region_);
  }
  size_t slots() const { return slots_; }
  size_t chunkBytes() const { return chunkBytes_; }
  // The slot that carries chunk number `chunk` (counted from 0).
  ShmSlotHeader& header(uint64_t chunk) const {
    return *reinterpret_cast<ShmSlotHeader*>(slot(chunk));
  }
  CallSignature& call(uint64_t chunk) const {
    return reinterpret_cast<ShmSlotCall*>(slot(chunk) + sizeof(ShmSlotHeader))
        ->call;
  }
  // Where chunk number `chunk` of `bytes` lies: in its header, if small.
  char* data(uint64_t chunk, size_t bytes) const {
    return bytes <= kShmInlineBytes ? header(chunk).inlineChunk
                                    : slot(chunk) + kSlotPrefixBytes;
  }

  // Bytes of a region with this geometry.
  static size_t regionBytes(size_t slots, size_t chunkBytes);

 private:
  static constexpr size_t kSlotPrefixBytes =
      sizeof(ShmSlotHeader) + sizeof(ShmSlotCall);

  char* slot(uint64_t chunk) const;

  char* region_ = nullptr;
  size_t slots_ = 0;
  size_t chunkBytes_ = 0;
};

namespace shm_layout {

// Bytes of a segment with one region per peer.
size_t segmentBytes(const ShmLinkSettings& settings, size_t peerCount);

// Writes the header and the peer table into a fresh (zeroed) segment.
void format(void* base, size_t bytes, const ShmLinkSettings& settings,
            const std::vector<int>& peers);

// The owner's region for `peer`, in a segment it formatted itself.
ShmRingView ownRegion(void* base, int peer);

// The region for rank `reader` in a peer's segment of `bytes`. Throws
// ncclInvalidUsage if the owner does not link to `reader` (asymmetric
// peer lists), ncclInternalError if the segment is not well formed.
ShmRingView regionFor(void* base, size_t bytes, int reader, int owner);

}  // namespace shm_layout

}  // namespace hetccl
