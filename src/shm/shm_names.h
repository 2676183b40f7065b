// Names of HetCCL's shared-memory segments carry their creator, so that a
// later process can tell a name left behind (every rank of an init killed
// before any could remove it) from one still in use:
//   /<prefix>-<pid>-<pid namespace>-<16 hex digits>
// where the prefix starts with "hetccl" and the pid namespace is the inode
// number of the creator's /proc/self/ns/pid (0 if it could not be read).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace hetccl {

struct SegmentCreator {
  pid_t pid;
  uint64_t pidNamespace;
};

// A fresh name for a segment this process creates.
std::string uniqueSegmentName(const char* prefix);

// Who created the segment `name` (an entry of /dev/shm, without the '/'),
// if the name has the form above.
std::optional<SegmentCreator> segmentCreator(const std::string& name);

// This process's pid namespace, as names carry it; 0 if unknown.
uint64_t ownPidNamespace();

// Removes the names in /dev/shm of the form above whose creator is
// provably gone: it ran in this process's pid namespace (a pid means
// something only inside its namespace: another container sharing
// /dev/shm has its own numbers) and kill(pid, 0) fails with ESRCH. A name
// whose pid lives (possibly a recycled pid: the name then stays, which is
// harmless), from another namespace or of another user stays. Removing a
// name never harms a live communicator: its segment stays mapped, and an
// exchange whose creator died fails anyway. Returns how many it removed.
size_t removeNamesOfGoneCreators();

}  // namespace hetccl
