/*
 * HetCCL extensions to the NCCL API.
 *
 * CPU ranks have no device runtime, so HetCCL provides the stream that their
 * collectives are ordered on: a host stream is an in-order queue of work
 * served by a thread of its own. Pass it wherever NCCL takes a cudaStream_t.
 * A NULL stream on a CPU rank means "run now": the call returns when the
 * operation (or, inside a group, the whole group at ncclGroupEnd) is done.
 */
#ifndef HETCCL_H_
#define HETCCL_H_

#include "nccl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Host streams: in-order queues of work for CPU ranks. */
ncclResult_t hetcclStreamCreate(cudaStream_t* stream);
ncclResult_t hetcclStreamDestroy(cudaStream_t stream);
/* Blocks until all work queued so far is done; returns the first error any
 * of it raised (the error stays with the stream until it is destroyed). */
ncclResult_t hetcclStreamSynchronize(cudaStream_t stream);
/* ncclSuccess when idle, ncclInProgress while work is queued or running. */
ncclResult_t hetcclStreamQuery(cudaStream_t stream);

/* Which kind of rank a communicator runs on: the kind of buffers and
 * streams it takes (a GPU emulated on the host, HETCCL_EMULATED_GPU=1,
 * takes the host's). */
typedef enum {
  hetcclRuntimeHost = 0,
  hetcclRuntimeCuda = 1,
  hetcclRuntimeHip = 2
} hetcclRuntimeKind_t;

ncclResult_t hetcclCommRuntime(ncclComm_t comm, hetcclRuntimeKind_t* kind);
/* Number of domains in the communicator and this rank's domain index. */
ncclResult_t hetcclCommDomains(ncclComm_t comm, int* ndomains, int* domain);
/* Payload bytes this rank has sent to and received from ranks of other
 * domains since the communicator was created (0 with one domain). */
ncclResult_t hetcclCommCrossDomainBytes(ncclComm_t comm, size_t* sent,
                                        size_t* received);
/* A map of the communicator, the same on every rank: its hosts, its domains
 * (ranks, devices, the back-end that runs each) and the transports linking
 * each pair of domains, one line each, separated by '\n'. Writes at most
 * `size` bytes to `text` (NUL-terminated; `text` may be NULL when `size` is
 * 0) and the size the whole map needs, NUL included, to `needed`. */
ncclResult_t hetcclCommTopology(ncclComm_t comm, char* text, size_t size,
                                size_t* needed);
/* What runs this rank's domain: the vendor library's name, version and file
 * ("NCCL 2.28.9, /usr/lib/x86_64-linux-gnu/libnccl.so.2"), or HetCCL's own
 * back-end ("HetCCL's host collectives 0.1.0"). Written as
 * hetcclCommTopology writes. */
ncclResult_t hetcclCommDomainLibrary(ncclComm_t comm, char* text, size_t size,
                                     size_t* needed);
/* Where this GPU rank's buffers go toward each other domain and why, one
 * line per domain: "domain 1: tcp, staged through host memory (...)" or
 * "domain 1: ucx, handed to UCX as they are (cuda memory, over RDMA)".
 * Empty for a CPU rank and in a communicator of one domain. Written as
 * hetcclCommTopology writes. */
ncclResult_t hetcclCommGpuBuffers(ncclComm_t comm, char* text, size_t size,
                                  size_t* needed);

#ifdef __cplusplus
}
#endif

#endif /* HETCCL_H_ */
