// Reading another process's memory in place (Linux cross-memory attach,
// process_vm_readv): a message goes from the sender's buffer into the
// receiver's in one copy, instead of one into shared memory and one out.
// The kernel allows it where the reader may ptrace the owner (the same
// user, and Yama's ptrace_scope 0, or CAP_SYS_PTRACE) and sees the owner's
// pid (the same pid namespace); a seccomp filter may forbid the call. So
// two ranks probe it at set-up: the owner publishes a word of its own
// memory and the reader checks that it reads that word back.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace hetccl {

// What a process publishes so that others can check they read its memory:
// its pid, and the address and the value of a word of its own.
struct MemoryProbe {
  uint64_t pid;
  uint64_t address;
  uint64_t value;
};

// A word of this process's memory to publish as a MemoryProbe; it must
// stay alive until every reader has probed.
class ProbeWord {
 public:
  ProbeWord();
  MemoryProbe probe() const;

 private:
  uint64_t value_;
};

// Empty if this process reads `probe`'s word from its process, else why
// not, in words for the log ("process_vm_readv: Operation not permitted").
std::string whyUnreadable(const MemoryProbe& probe);

// Reads up to `bytes` at `remote` in process `pid` into `local`: how many
// bytes were read (maybe fewer, where the remote range ends early), or
// -errno.
ssize_t readProcessMemory(uint64_t pid, uint64_t remote, void* local,
                          size_t bytes);

// Whether another process can read [data, data + bytes) of this one: the
// kernel does not read pages that a driver mapped for a device (pinned GPU
// staging memory, say) for others. Reads the first and the last byte back
// through the same call.
bool readableInPlace(const void* data, size_t bytes);

}  // namespace hetccl
