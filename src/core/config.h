// A communicator's configuration, read from the caller's ncclConfig_t.
#pragma once

#include <string>

#include "nccl.h"

namespace hetccl {

struct CommConfig {
  bool blocking = true;
  std::string name;
  int splitShare = 0;

  // Reads only the fields the caller's struct (of `config->size` bytes)
  // contains, so that callers built against older or newer NCCL headers are
  // understood. NULL means all defaults. Throws ncclInvalidArgument for a
  // struct that is not an ncclConfig_t.
  static CommConfig fromUser(const ncclConfig_t* config);
};

}  // namespace hetccl
