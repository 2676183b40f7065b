#include "shm/shm_room.h"

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <fstream>

#include "util/error.h"
#include "util/wire.h"

namespace hetccl {
namespace {

constexpr const char* kShmDirectory = "/dev/shm";

uint64_t spaceOf(const struct stat& directory) {
  std::string boot;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;
  const std::string key = boot + "/" + std::to_string(directory.st_dev);
  return fnv1a64(key.data(), key.size());
}

// MemAvailable: what the kernel can give without swapping.
uint64_t memAvailableBytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string field;
  uint64_t kib = 0;
  while (meminfo >> field >> kib) {
    if (field == "MemAvailable:") return kib * 1024;
    meminfo.ignore(64, '\n');  // the unit
  }
  return UINT64_MAX;
}

std::string describeRoom(uint64_t bytes) {
  return bytes == UINT64_MAX ? "unknown" : describeBytes(bytes);
}

}  // namespace

ShmRoom ShmRoom::measure() {
  ShmRoom room{0, UINT64_MAX, UINT64_MAX};
  struct stat directory {};
  struct statvfs filesystem {};
  if (stat(kShmDirectory, &directory) == 0) room.space = spaceOf(directory);
  if (statvfs(kShmDirectory, &filesystem) == 0)
    room.freeBytes = static_cast<uint64_t>(filesystem.f_bavail) *
                     static_cast<uint64_t>(filesystem.f_frsize);
  room.availableBytes = memAvailableBytes();
  return room;
}

void checkShmRoom(const std::vector<ShmDemand>& demands, int rank,
                  const char* what, const std::string& sizedBy) {
  const ShmDemand& own = demands.at(rank);
  if (own.bytes == 0) return;
  uint64_t total = 0, freeBytes = UINT64_MAX, availableBytes = UINT64_MAX;
  int creators = 0;
  for (const ShmDemand& demand : demands) {
    if (demand.bytes == 0 || demand.room.space != own.room.space) continue;
    total += demand.bytes;
    ++creators;
    // Each rank measured before any segment of this exchange existed.
    freeBytes = std::min(freeBytes, demand.room.freeBytes);
    availableBytes = std::min(availableBytes, demand.room.availableBytes);
  }
  if (total <= freeBytes && total <= availableBytes) return;
  fail(ncclSystemError,
       "%s: the %d rank(s) sharing this host's /dev/shm would need %s of "
       "shared memory together (rank %d: %s for %s), but /dev/shm has %s "
       "free and the host %s of memory available (MemAvailable); lower "
       "those settings",
       what, creators, describeBytes(total).c_str(), rank,
       describeBytes(own.bytes).c_str(), sizedBy.c_str(),
       describeRoom(freeBytes).c_str(), describeRoom(availableBytes).c_str());
}

std::string describeBytes(uint64_t bytes) {
  static const char* const kUnits[] = {"bytes", "KiB", "MiB",
                                       "GiB",   "TiB", "PiB"};
  constexpr size_t kLastUnit = sizeof(kUnits) / sizeof(kUnits[0]) - 1;
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024 && unit < kLastUnit) {
    value /= 1024;
    ++unit;
  }
  std::string number = format("%.1f", value);
  if (number.size() > 2 && number.compare(number.size() - 2, 2, ".0") == 0)
    number.resize(number.size() - 2);
  return number + " " + kUnits[unit];
}

}  // namespace hetccl
