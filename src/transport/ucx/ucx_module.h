/*
 * The table the UCX module (libhetccl-ucx.so) exports: a thin layer over
 * UCX's UCP tag API, so that the core never links UCX. The module is built
 * only where UCX's headers are (libucx-dev); without it, or without UCX's
 * libraries at run time, the ucx transport reports itself unavailable.
 * Plain C, guarded by an ABI version against a module of another build.
 *
 * Statuses are UCX's (ucs_status_t: 0 is success, errors are negative);
 * statusString() turns one into UCX's message. A worker and everything
 * posted on it belong to one thread at a time (the caller serialises).
 */
#ifndef HETCCL_TRANSPORT_UCX_UCX_MODULE_H_
#define HETCCL_TRANSPORT_UCX_UCX_MODULE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 3: the library, not the module, leaves a UCX_NET_DEVICES the user set
 * alone (contextCreate). */
#define HETCCL_UCX_MODULE_ABI 3
/* The module's one exported function returns its table. */
#define HETCCL_UCX_MODULE_ENTRY "hetcclUcxModule"

/* UCX's status for "try again" from workerArm: events are pending. */
#define HETCCL_UCX_BUSY (-4)

/* Memory a context can move without staging, as in the transport
 * registry's MemoryKind bits. */
#define HETCCL_UCX_MEMORY_HOST 1u
#define HETCCL_UCX_MEMORY_CUDA 2u
#define HETCCL_UCX_MEMORY_ROCM 4u

typedef struct hetcclUcxContext hetcclUcxContext;
typedef struct hetcclUcxWorker hetcclUcxWorker;
typedef struct hetcclUcxEndpoint hetcclUcxEndpoint;
/* A posted operation that has not completed yet. */
typedef struct hetcclUcxOperation hetcclUcxOperation;

/* Called once per posted operation, from workerProgress (or from the post
 * itself when it completes at once): `status` 0 or an error; `bytes` the
 * length that arrived (receives; 0 for sends); `tag` the sender's tag
 * (receives; the posted tag for sends). The operation handle is invalid
 * once this returns. */
typedef void (*hetcclUcxCompletion)(void* user, int status, size_t bytes,
                                    uint64_t tag);
/* Called from workerProgress when UCX gives up on an endpoint's peer. */
typedef void (*hetcclUcxPeerFailure)(void* user, int status);

typedef struct {
  uint32_t abiVersion; /* HETCCL_UCX_MODULE_ABI */
  const char* (*statusString)(int status);
  void (*version)(unsigned* major, unsigned* minor, unsigned* release);
  /* UCX's transports on this machine, as "tcp, posix, rc_mlx5/mlx5_0:1"
   * (UCT's view, as ucx_info -d), into `names` of `length` bytes. */
  int (*listTransports)(char* names, size_t length);

  /* A context for tag matching with wake-up events, shared by workers of
   * several threads. `netDevices`, if not NULL, is UCX_NET_DEVICES's value
   * for it. */
  int (*contextCreate)(const char* netDevices, hetcclUcxContext** context);
  void (*contextDestroy)(hetcclUcxContext* context);
  /* HETCCL_UCX_MEMORY_* bits of the memory types the context supports. */
  unsigned (*contextMemoryTypes)(hetcclUcxContext* context);

  int (*workerCreate)(hetcclUcxContext* context, hetcclUcxWorker** worker);
  /* Every endpoint must be closed first. */
  void (*workerDestroy)(hetcclUcxWorker* worker);
  /* Waits at most `seconds` for what was sent on the worker's endpoints to
   * reach the peers (before closing them); 0 or an error. */
  int (*workerFlush)(hetcclUcxWorker* worker, double seconds);
  /* Copies the worker's address into `address` (`*length` bytes of room;
   * set to the address's length). */
  int (*workerAddress)(hetcclUcxWorker* worker, void* address, size_t* length);
  /* A file descriptor that becomes readable when armed and an event comes. */
  int (*workerEventFd)(hetcclUcxWorker* worker, int* fd);
  /* 0: armed, sleep on the event fd; HETCCL_UCX_BUSY: progress first. */
  int (*workerArm)(hetcclUcxWorker* worker);
  /* Runs completions; returns how many communication events it saw. */
  unsigned (*workerProgress)(hetcclUcxWorker* worker);

  /* An endpoint to the worker at `address`; `onFailure(user, status)` is
   * called if the peer is lost (UCX's peer error handling). */
  int (*endpointCreate)(hetcclUcxWorker* worker, const void* address,
                        hetcclUcxPeerFailure onFailure, void* user,
                        hetcclUcxEndpoint** endpoint);
  /* Closes the endpoint at once, cancelling what is still posted on it. */
  void (*endpointClose)(hetcclUcxWorker* worker, hetcclUcxEndpoint* endpoint);

  /* Posts a tagged send or receive of `bytes` at `buffer` of memory type
   * `memory` (a HETCCL_UCX_MEMORY_* bit). Returns an error, or 0 with
   * `*operation` set while it is in flight, or to NULL when `done` already
   * ran. A receive matches the tags that equal `tag` in the bits set in
   * `tagMask`. */
  int (*tagSend)(hetcclUcxEndpoint* endpoint, const void* buffer, size_t bytes,
                 uint64_t tag, unsigned memory, hetcclUcxCompletion done,
                 void* user, hetcclUcxOperation** operation);
  int (*tagRecv)(hetcclUcxWorker* worker, void* buffer, size_t bytes,
                 uint64_t tag, uint64_t tagMask, unsigned memory,
                 hetcclUcxCompletion done, void* user,
                 hetcclUcxOperation** operation);
  /* Asks UCX to end an operation in flight; its completion then runs from
   * workerProgress with a cancelled status. */
  void (*cancel)(hetcclUcxWorker* worker, hetcclUcxOperation* operation);
} hetcclUcxModuleTable;

typedef const hetcclUcxModuleTable* (*hetcclUcxModuleEntry)(void);

#ifdef __cplusplus
}
#endif

#endif /* HETCCL_TRANSPORT_UCX_UCX_MODULE_H_ */
