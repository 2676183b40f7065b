// How much shared memory a host can still give, measured before a segment
// exchange creates anything. Segments live in /dev/shm (tmpfs), whose pages
// are memory: a size inside the accepted range can still ask for more than
// the host has (HETCCL_SHM_P2P_CHUNK=1G with 4 ranks is 4 x 8 GiB), and
// then the kernel's OOM killer, not an error, ends the job and others.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hetccl {

// Plain data: it travels in an all-gather.
struct ShmRoom {
  // Which /dev/shm (boot id and device): ranks with the same one draw on
  // the same space, whichever host HETCCL_HOSTID says they are on.
  uint64_t space;
  // UINT64_MAX where unknown (not limiting).
  uint64_t freeBytes;       // statvfs of /dev/shm
  uint64_t availableBytes;  // MemAvailable of /proc/meminfo

  static ShmRoom measure();
};

// What one rank will create in one exchange, and the room it measured.
struct ShmDemand {
  uint64_t bytes;  // 0: no segment
  ShmRoom room;
};

// Throws ncclSystemError if the segments that `rank` and the other ranks of
// its space will create (`demands`, by rank) need more than that space's
// free /dev/shm or available memory (the least any of them measured); the
// message gives the sizes, `what` (the user) and `sizedBy` (the variables
// that made this rank's size). A rank that creates nothing never fails.
void checkShmRoom(const std::vector<ShmDemand>& demands, int rank,
                  const char* what, const std::string& sizedBy);

// "512 KiB", "8 GiB", "23.4 GiB": to a tenth of the unit.
std::string describeBytes(uint64_t bytes);

}  // namespace hetccl
