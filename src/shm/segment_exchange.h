// The collective set-up that every shared-memory user of a host repeats:
// each rank removes the names that dead processes left in /dev/shm and
// measures the room there, the ranks all-gather the names and sizes they
// will use, each checks that the segments of its host fit before it creates
// its own, maps the segments it needs, and once every rank has mapped, the
// names are removed. A failure on any rank (no room, a full /dev/shm, a
// peer that created no segment) fails the exchange on every rank, so that
// none waits forever, and the survivors of a rank that died in the middle
// remove its name, so that nothing stays in /dev/shm.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "shm/shm_segment.h"
#include "util/oob.h"

namespace hetccl {

// What differs between the users of exchangeSegments. Each callback may
// throw; the exchange then fails on every rank. `format` and `mapped` may
// be empty.
struct SegmentExchange {
  const char* what;        // the user, for messages: "shm transport"
  const char* namePrefix;  // of the segment names in /dev/shm
  // Bytes of this rank's segment; 0 creates none. Runs first.
  std::function<size_t()> ownBytes;
  // The settings that made that size, for the message when the host has
  // no room for it: "HETCCL_SHM_CHUNK=512K and HETCCL_SHM_P2P_CHUNK=1G".
  std::string sizedBy;
  // Fills this rank's new segment before any peer can map it.
  std::function<void(ShmSegment& own)> format;
  // Whether this rank maps rank `r`'s segment (its own included).
  std::function<bool(int r)> maps;
  // Runs on each segment this rank maps, in rank order, before the names
  // are removed.
  std::function<void(int r, ShmSegment& segment)> mapped;
};

// Collective over `oob`. Fills `segments` by rank: this rank's own (its
// name already removed) and those `maps` chose; the others stay empty. The
// caller owns them even when the exchange throws, so that it can release
// what `mapped` built on them (a registration) before they are unmapped.
void exchangeSegments(Oob& oob, const SegmentExchange& exchange,
                      std::vector<ShmSegment>& segments);

}  // namespace hetccl
