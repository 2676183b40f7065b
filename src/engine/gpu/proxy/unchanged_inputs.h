// The buffers a running plan only reads: the send buffers of its ops that
// no op of the plan writes (an out-of-place collective's input, a group's
// send buffers apart from its receive buffers). A staged send out of one
// of them needs the engine's stream to have reached the plan's start, not
// everything the plan enqueued before the send: otherwise a chunk's send
// waits until the engine's stream is past the previous chunks' waits for
// the network, a round trip that leaves the link idle. An in-place op's
// input is also its output, so its sends follow the engine's stream.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "op/op.h"

namespace hetccl {

class UnchangedInputs {
 public:
  // The plan of `ops` (one collective, or a group's sends and receives)
  // starts on rank `rank` of `nranks`.
  void start(const std::vector<Op>& ops, int rank, int nranks);
  // Whether [data, data + bytes) lies within one of them.
  bool hold(const void* data, size_t bytes) const;

 private:
  std::vector<std::pair<const char*, const char*>> ranges_;  // [begin, end)
};

}  // namespace hetccl
