// Starting and stopping bootstrap roots: what ncclGetUniqueId does, and
// what rank 0 does when HETCCL_COMM_ID / NCCL_COMM_ID fixes the root.
#pragma once

#include "bootstrap/bootstrap_settings.h"
#include "nccl.h"

namespace hetccl {

// Makes a new id. Without a fixed COMM_ID it listens on
// chooseLocalAddress() (an ephemeral port), starts the root service for
// one communicator on a thread of its own, and returns an id naming it
// and a fresh random secret. With HETCCL_COMM_ID / NCCL_COMM_ID set it
// returns the id that every process computes alike and starts nothing:
// rank 0 starts the root in startRootIfNeeded. The root gives up after
// HETCCL_BOOTSTRAP_TIMEOUT seconds, read here (no communicator exists yet),
// and names the ranks it waits for after HETCCL_STALL_WARN.
ncclUniqueId createUniqueId();

// Like createUniqueId without a fixed COMM_ID, whatever the environment
// says: a fresh root on an ephemeral port, which waits for ranks as
// `settings` say. For communicators made inside the
// library (split, shrink, ncclCommInitAll), which must not collide with
// the fixed address of the communicator the launcher set up.
ncclUniqueId createEphemeralUniqueId(const BootstrapSettings& settings);

// For an id with a fixed root address, on rank 0: starts the root service
// on that address (falling back to all local addresses with that port if
// the address is not a local one), unless this process already runs it.
// Does nothing for other ids and ranks; Bootstrap::init calls it, so
// callers of Bootstrap::init need not. The root waits for ranks as
// `settings` say. Throws ncclSystemError if the port
// cannot be listened on, ncclInvalidArgument for a corrupted id.
void startRootIfNeeded(const ncclUniqueId& id, int rank,
                       const BootstrapSettings& settings);

// Tells the root of `id` that its communicator will not be formed (e.g.
// the extra ids of ncclCommInitRankScalable), so that it exits now rather
// than at its timeout. Best effort: returns false if no root acknowledged
// within `timeoutSeconds`.
bool cancelRoot(const ncclUniqueId& id, double timeoutSeconds = 5.0);

}  // namespace hetccl
