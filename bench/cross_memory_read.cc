// What one copy through the kernel costs against two through shared memory:
// a process reads 64 MiB that a child process filled, with
// process_vm_readv (Linux cross-memory attach, a receiver reading the
// sender's buffer in place) in slices of 64 KiB to 4 MiB, against memcpy
// of the same bytes within the process (each of the two copies a shm
// link's ring makes). A shm link that let the receiver read in place
// would pay the first instead of twice the second
// (bench/results/shm-read-in-place-2026-12-07.md).
//
//   build/bench/cross-memory-read [rounds]
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr size_t kBytes = size_t{64} << 20;

using Clock = std::chrono::steady_clock;

double gbPerSecond(Clock::time_point start) {
  const double seconds =
      std::chrono::duration<double>(Clock::now() - start).count();
  return static_cast<double>(kBytes) / seconds / 1e9;
}

// Forks a child that fills kBytes of its own and waits for a byte on
// `release`; returns its pid, and where the bytes lie in it.
pid_t startSource(int release, uint64_t& address) {
  int report[2];
  if (pipe(report) != 0) return -1;
  const pid_t child = fork();
  if (child == 0) {
    std::vector<char> bytes(kBytes, 1);
    const auto at = reinterpret_cast<uint64_t>(bytes.data());
    char go = 0;
    const bool ok = write(report[1], &at, sizeof(at)) == sizeof(at) &&
                    read(release, &go, 1) == 1;
    _exit(ok ? 0 : 1);
  }
  close(report[1]);
  const bool told = child > 0 && read(report[0], &address, sizeof(address)) ==
                                     sizeof(address);
  close(report[0]);
  return told ? child : -1;
}

bool readAll(pid_t source, uint64_t address, char* into, size_t slice) {
  for (size_t offset = 0; offset < kBytes; offset += slice) {
    iovec local{into + offset, slice};
    iovec remote{reinterpret_cast<void*>(address + offset), slice};
    if (process_vm_readv(source, &local, 1, &remote, 1, 0) !=
        static_cast<ssize_t>(slice)) {
      std::perror("process_vm_readv");
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 3;
  int release[2];
  if (pipe(release) != 0) return 1;
  uint64_t address = 0;
  const pid_t source = startSource(release[0], address);
  if (source < 0) return 1;
  std::vector<char> local(kBytes, 1), into(kBytes, 0);
  std::printf(
      "| slice | process_vm_readv GB/s | memcpy GB/s |\n|---:|---:|---:|\n");
  int status = 0;
  for (size_t slice = size_t{64} << 10; slice <= (size_t{4} << 20) && !status;
       slice *= 4) {
    for (int round = 0; round < rounds && !status; ++round) {
      const auto start = Clock::now();
      if (!readAll(source, address, into.data(), slice)) status = 1;
      const double read = gbPerSecond(start);
      const auto copyStart = Clock::now();
      for (size_t offset = 0; offset < kBytes; offset += slice)
        std::memcpy(into.data() + offset, local.data() + offset, slice);
      std::printf("| %zu KiB | %.2f | %.2f |\n", slice >> 10, read,
                  gbPerSecond(copyStart));
    }
  }
  if (write(release[1], "x", 1) != 1) status = 1;
  waitpid(source, nullptr, 0);
  return status;
}
