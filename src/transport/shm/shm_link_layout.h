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
//           digest of the call it belongs to, where the message lies in
//           the sender's memory if read in place, a small chunk inline) |
//           the call's signature | chunk bytes
//
// A message larger than its ring may be read in place instead (where the
// receiver can read the sender's memory: process_memory.h): one slot then
// holds its header and its address, and the receiver copies the whole
// message from the sender's buffer before it consumes that slot, which
// completes the send.
#pragma once

#include "shm/shm_counter.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "op/call_signature.h"
#include "transport/shm/process_memory.h"
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
  // 1 once the owner found at set-up that it reads the peer's memory in
  // place: the peer may send messages larger than its ring by address.
  ShmCounter readsPeerMemory;
  // 0, or the errno of the owner's failed read of a message in place.
  ShmCounter readFailure;
  // 0, or 1 + the number of the owner's chunk (its slot) that named a
  // message read in place which the owner gave up on (it was aborted or
  // timed out) before the peer consumed that slot: its buffer may be
  // reused, so what the peer read of it is not the message.
  ShmCounter withdrawn;
};

// A chunk of at most this many bytes travels inside its slot's header.
constexpr size_t kShmInlineBytes = 24;

// Precedes every chunk, in the one cache line the receiver polls: the
// flag that the slot holds the chunk, which message the chunk belongs to
// and how long that whole message is (so that a receiver can check the
// sizes agree), a digest of the call the message belongs to (so that it
// can check the calls agree), the address of a message read in place, and
// a small chunk itself. The sender stores
// the flag last (release), so a receiver that sees it sees the rest: a
// small message reaches its receiver in one cache line and one poll, and
// no separate counter is read first (the shm link's low-latency protocol).
struct alignas(64) ShmSlotHeader {
  std::atomic<uint64_t> filled;  // 1 + the number of the chunk it holds
  uint64_t sequence;
  uint64_t messageBytes;
  uint64_t callDigest;  // shmCallDigest of the message's call
  // 0, or where the whole message lies in the sender's memory: the slot
  // carries no bytes of it, the receiver reads it in place.
  uint64_t inPlaceAddress;
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

// Writes the header and the peer table into a fresh (zeroed) segment;
// `probe` lets the peers check that they can read the owner's memory.
void format(void* base, size_t bytes, const ShmLinkSettings& settings,
            const std::vector<int>& peers, const MemoryProbe& probe);

// The owner's probe, in a segment that regionFor found well formed.
MemoryProbe probeOf(const void* base);

// The owner's region for `peer`, in a segment it formatted itself.
ShmRingView ownRegion(void* base, int peer);

// The region for rank `reader` in a peer's segment of `bytes`. Throws
// ncclInvalidUsage if the owner does not link to `reader` (asymmetric
// peer lists), ncclInternalError if the segment is not well formed.
ShmRingView regionFor(void* base, size_t bytes, int reader, int owner);

}  // namespace shm_layout

}  // namespace hetccl
