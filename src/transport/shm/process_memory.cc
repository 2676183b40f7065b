#include "transport/shm/process_memory.h"

#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

#include "util/error.h"

namespace hetccl {

ProbeWord::ProbeWord() {
  std::random_device device;
  value_ = (static_cast<uint64_t>(device()) << 32) ^ device();
}

MemoryProbe ProbeWord::probe() const {
  return {static_cast<uint64_t>(getpid()), reinterpret_cast<uint64_t>(&value_),
          value_};
}

ssize_t readProcessMemory(uint64_t pid, uint64_t remote, void* local,
                          size_t bytes) {
  iovec into{local, bytes};
  iovec from{reinterpret_cast<void*>(remote), bytes};
  for (;;) {
    ssize_t n =
        process_vm_readv(static_cast<pid_t>(pid), &into, 1, &from, 1, 0);
    if (n >= 0) return n;
    if (errno != EINTR) return -errno;
  }
}

std::string whyUnreadable(const MemoryProbe& probe) {
  uint64_t word = ~probe.value;
  ssize_t n = readProcessMemory(probe.pid, probe.address, &word, sizeof word);
  if (n < 0) return format("process_vm_readv: %s", std::strerror(-n));
  if (n != sizeof word || word != probe.value)
    return format(
        "process %llu's word read back differs (another pid "
        "namespace?)",
        static_cast<unsigned long long>(probe.pid));
  return {};
}

bool readableInPlace(const void* data, size_t bytes) {
  if (bytes == 0) return true;
  const auto first = reinterpret_cast<uint64_t>(data);
  char ends[2];
  const uint64_t self = static_cast<uint64_t>(getpid());
  return readProcessMemory(self, first, &ends[0], 1) == 1 &&
         readProcessMemory(self, first + bytes - 1, &ends[1], 1) == 1;
}

}  // namespace hetccl
