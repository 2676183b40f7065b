#include "transport/shm/shm_link_layout.h"

#include <cstring>

#include "util/error.h"

namespace hetccl {
namespace {

constexpr uint64_t kMagic = 0x4b4e494c4d485348ull;  // "HSHMLINK"
// 2: the filled flag in slot headers; 3: the call's signature in every slot
constexpr uint32_t kVersion = 3;
constexpr size_t kPage = 4096;
// Bounds of a ring that a peer's segment header may claim; the same as
// HETCCL_SHM_LINK_SLOTS's and HETCCL_SHM_LINK_CHUNK's (shm_link_params.def).
constexpr size_t kMinSlots = 1;
constexpr size_t kMaxSlots = 1024;
constexpr size_t kMinChunkBytes = 4096;
constexpr size_t kMaxChunkBytes = size_t{1} << 30;

struct SegmentHeader {
  uint64_t magic;
  uint32_t version;
  uint32_t peerCount;
  uint64_t slots;
  uint64_t chunkBytes;
  uint64_t regionBytes;
};

struct PeerEntry {
  int32_t rank;
  uint32_t reserved;
  uint64_t regionOffset;
};

size_t roundUp(size_t value, size_t align) {
  return (value + align - 1) / align * align;
}

// Regions start on a page after the header and the table.
size_t firstRegionOffset(size_t peerCount) {
  return roundUp(sizeof(SegmentHeader) + peerCount * sizeof(PeerEntry), kPage);
}

SegmentHeader& headerOf(void* base) {
  return *static_cast<SegmentHeader*>(base);
}

PeerEntry* tableOf(void* base) {
  return reinterpret_cast<PeerEntry*>(static_cast<char*>(base) +
                                      sizeof(SegmentHeader));
}

}  // namespace

ShmLinkSettings ShmLinkSettings::fromEnvironment() {
  ShmLinkSettings s;
  s.slots = static_cast<size_t>(readInteger(kShmLinkSlots));
  s.chunkBytes = roundUp(readBytes(kShmLinkChunk), 64);
  const std::string thread = readChoice(kShmLinkThread);
  s.progressThread = thread == "auto" ? ProgressThread::kAuto
                     : thread == "1"  ? ProgressThread::kAlways
                                      : ProgressThread::kNever;
  return s;
}

bool ShmLinkSettings::usesProgressThread(int cores, int hostRanks) const {
  if (progressThread != ProgressThread::kAuto)
    return progressThread == ProgressThread::kAlways;
  return cores >= 2 * hostRanks;
}

// Of what callsAgree compares (a send and its receive get the same digest),
// each word through a different odd multiplier, so that calls that differ
// in one field (half the count, another type of the same size) never share
// a digest, and calls that differ in several almost never do.
uint64_t shmCallDigest(const CallSignature& call) {
  CallSignature compared = call;
  if (call.pointToPoint()) {
    compared.call = OpKind::Send;
    compared.root = -1;
  }
  uint64_t words[3];
  static_assert(sizeof(words) == sizeof(CallSignature));
  std::memcpy(words, &compared, sizeof(words));
  uint64_t h = words[0] * 0x9e3779b97f4a7c15ull;
  h = (h ^ (h >> 29)) + words[1] * 0xc2b2ae3d27d4eb4full;
  h = (h ^ (h >> 31)) + words[2] * 0x165667b19e3779f9ull;
  return h ^ (h >> 32);
}

ShmRingView::ShmRingView(char* region, size_t slots, size_t chunkBytes)
    : region_(region), slots_(slots), chunkBytes_(chunkBytes) {}

size_t ShmRingView::regionBytes(size_t slots, size_t chunkBytes) {
  return roundUp(
      sizeof(ShmLinkControl) + slots * (kSlotPrefixBytes + chunkBytes), kPage);
}

char* ShmRingView::slot(uint64_t chunk) const {
  size_t stride = kSlotPrefixBytes + chunkBytes_;
  return region_ + sizeof(ShmLinkControl) + (chunk % slots_) * stride;
}

namespace shm_layout {

size_t segmentBytes(const ShmLinkSettings& settings, size_t peerCount) {
  return firstRegionOffset(peerCount) +
         peerCount *
             ShmRingView::regionBytes(settings.slots, settings.chunkBytes);
}

void format(void* base, size_t bytes, const ShmLinkSettings& settings,
            const std::vector<int>& peers) {
  HETCCL_CHECK_ARG(settings.slots >= kMinSlots && settings.slots <= kMaxSlots,
                   "shm link: %zu slots per ring (%zu..%zu)", settings.slots,
                   kMinSlots, kMaxSlots);
  HETCCL_CHECK_ARG(settings.chunkBytes >= kMinChunkBytes &&
                       settings.chunkBytes <= kMaxChunkBytes &&
                       settings.chunkBytes % 64 == 0,
                   "shm link: %zu-byte slots (a multiple of 64, %zu..%zu)",
                   settings.chunkBytes, kMinChunkBytes, kMaxChunkBytes);
  if (bytes < segmentBytes(settings, peers.size()))
    fail(ncclInternalError, "shm link segment of %zu bytes is too small",
         bytes);
  SegmentHeader& header = headerOf(base);
  header.version = kVersion;
  header.peerCount = static_cast<uint32_t>(peers.size());
  header.slots = settings.slots;
  header.chunkBytes = settings.chunkBytes;
  header.regionBytes =
      ShmRingView::regionBytes(settings.slots, settings.chunkBytes);
  PeerEntry* table = tableOf(base);
  for (size_t i = 0; i < peers.size(); ++i) {
    table[i].rank = peers[i];
    table[i].regionOffset =
        firstRegionOffset(peers.size()) + i * header.regionBytes;
  }
  // Written last: a reader that sees the magic sees a complete table.
  std::atomic_thread_fence(std::memory_order_release);
  header.magic = kMagic;
}

ShmRingView ownRegion(void* base, int peer) {
  const SegmentHeader& header = headerOf(base);
  const PeerEntry* table = tableOf(base);
  for (uint32_t i = 0; i < header.peerCount; ++i)
    if (table[i].rank == peer)
      return ShmRingView(static_cast<char*>(base) + table[i].regionOffset,
                         header.slots, header.chunkBytes);
  fail(ncclInternalError, "shm link segment has no region for rank %d", peer);
}

ShmRingView regionFor(void* base, size_t bytes, int reader, int owner) {
  std::atomic_thread_fence(std::memory_order_acquire);
  const SegmentHeader& header = headerOf(base);
  bool wellFormed = bytes >= sizeof(SegmentHeader) && header.magic == kMagic &&
                    header.version == kVersion && header.slots >= kMinSlots &&
                    header.slots <= kMaxSlots &&
                    header.chunkBytes >= kMinChunkBytes &&
                    header.chunkBytes <= kMaxChunkBytes &&
                    firstRegionOffset(header.peerCount) <= bytes &&
                    header.regionBytes == ShmRingView::regionBytes(
                                              header.slots, header.chunkBytes);
  if (!wellFormed)
    fail(ncclInternalError,
         "the shm link segment of rank %d is not well formed", owner);
  const PeerEntry* table = tableOf(base);
  for (uint32_t i = 0; i < header.peerCount; ++i) {
    if (table[i].rank != reader) continue;
    if (table[i].regionOffset > bytes ||
        bytes - table[i].regionOffset < header.regionBytes)
      fail(ncclInternalError,
           "the shm link segment of rank %d places rank %d's region "
           "outside the segment",
           owner, reader);
    return ShmRingView(static_cast<char*>(base) + table[i].regionOffset,
                       header.slots, header.chunkBytes);
  }
  fail(ncclInvalidUsage,
       "shm transport: rank %d links to rank %d, but rank %d does not link "
       "back (peer lists must be symmetric)",
       reader, owner, owner);
}

}  // namespace shm_layout
}  // namespace hetccl
