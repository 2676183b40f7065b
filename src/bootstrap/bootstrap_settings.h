// The bootstrap's parameters (bootstrap_params.def): a fixed root
// (HETCCL_COMM_ID, HETCCL_COMM_SECRET, read where ids are made,
// unique_id.cc) and how long to wait for ranks, which a communicator reads
// when it is created and ncclGetUniqueId when it starts a root.
#pragma once

#include "util/params.h"

namespace hetccl {

#define HETCCL_PARAMS_FILE "bootstrap/bootstrap_params.def"
#define HETCCL_PARAMS_LIST bootstrapParams
#include "util/declare_params.inc"

// How long a root, a rank's bootstrap and the connection of links wait for
// ranks, and how long any wait for a peer lasts before a warning says what
// it waits for (0: forever, never).
struct BootstrapSettings {
  double timeoutSeconds = 300;   // HETCCL_BOOTSTRAP_TIMEOUT
  double stallWarnSeconds = 30;  // HETCCL_STALL_WARN

  // Throws ncclInvalidArgument for a bad value.
  static BootstrapSettings fromEnvironment();
};

}  // namespace hetccl
