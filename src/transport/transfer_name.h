// What names a transfer in messages ("a 4096-byte send to rank 3"), kept as
// its parts and written out only when a message needs it: formatting it on
// every post took about half the latency of a small shm-link message.
#pragma once

#include <cstddef>
#include <string>

#include "util/error.h"

namespace hetccl {

struct TransferName {
  size_t bytes;
  bool sending;
  int peer;

  std::string text() const {
    return format("a %zu-byte %s rank %d", bytes,
                  sending ? "send to" : "receive from", peer);
  }
};

}  // namespace hetccl
