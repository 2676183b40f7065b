/*
 * The table the net module (libhetccl-net.so) exports: the one place that
 * speaks the NCCL network plugin ABI (module/net_plugin_abi.h, v8 to v12),
 * so that the core sees one shape whatever version a plugin has. The module
 * dlopens the plugin, takes its newest table, hands the plugin a logger and
 * a profiler callback, and smooths over what the versions differ in (init
 * contexts, size types, property layouts). Plain C, guarded by an ABI
 * version against a module of another build.
 *
 * Results are the plugin's (ncclResult_t values: 0 is success). A comm and
 * the requests posted on it belong to one thread at a time (the caller
 * serialises).
 */
#ifndef HETCCL_TRANSPORT_NET_NET_MODULE_H_
#define HETCCL_TRANSPORT_NET_NET_MODULE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HETCCL_NET_MODULE_ABI 2
/* The module's one exported function returns its table. */
#define HETCCL_NET_MODULE_ENTRY "hetcclNetModule"
/* Bytes of a listen handle (the ABI's). */
#define HETCCL_NET_MODULE_HANDLE_BYTES 128
/* Requests a comm takes in flight at once (the ABI's promise; more is the
 * caller's error). */
#define HETCCL_NET_MODULE_MAX_REQUESTS 32
/* The ABI's NCCL_PTR_* bits: memory a device reads and writes itself. */
#define HETCCL_NET_MODULE_PTR_HOST 0x1
#define HETCCL_NET_MODULE_PTR_CUDA 0x2 /* GPU memory (RCCL's plugins too) */
#define HETCCL_NET_MODULE_PTR_DMABUF 0x4

typedef struct hetcclNetPlugin hetcclNetPlugin;
/* What init gave one communicator (v11 on: the plugin's context). */
typedef struct hetcclNetContext hetcclNetContext;

/* Where the plugin's log lines go: `level` 2 warn, 3 info, 5 trace (the
 * ABI's levels), `message` formatted, without a newline. */
typedef void (*hetcclNetLogSink)(int level, const char* message);

/* A device's properties, whatever version reported them. */
typedef struct {
  char name[128];
  char pciPath[256]; /* empty: a virtual device */
  uint64_t guid;
  int ptrSupport; /* the ABI's NCCL_PTR_* bits */
  int regIsGlobal;
  int forceFlush;
  int speedMbps;
  int port;
  float latencyUs;
  int maxComms;
  int maxRecvs;
  size_t maxP2pBytes; /* the largest message; v8: INT_MAX */
} hetcclNetDeviceInfo;

typedef struct {
  uint32_t abiVersion; /* HETCCL_NET_MODULE_ABI */

  /* Opens the plugin at `path` (RTLD_NOW | RTLD_LOCAL: its symbols never
   * serve others) and takes its newest table, v12 down to v8. 0, or -1
   * with the reason in `error`. The plugin's log lines go to `log`. */
  int (*load)(const char* path, hetcclNetLogSink log, hetcclNetPlugin** plugin,
              char* error, size_t errorBytes);
  /* The ABI version taken (8 .. 12) and the plugin's own name. */
  int (*version)(const hetcclNetPlugin* plugin);
  const char* (*name)(const hetcclNetPlugin* plugin);

  /* A context for one communicator: v11 on, the plugin's init with
   * `commId` and `trafficClass` (-1: the plugin's default); before v11 the
   * plugin's one init, made at the first call (later calls share it). */
  int (*init)(hetcclNetPlugin* plugin, uint64_t commId, int trafficClass,
              hetcclNetContext** context);
  /* v11 on, the plugin's finalize; frees the context. */
  int (*finalize)(hetcclNetContext* context);

  /* After an init. */
  int (*devices)(hetcclNetPlugin* plugin, int* count);
  int (*properties)(hetcclNetPlugin* plugin, int dev,
                    hetcclNetDeviceInfo* info);

  /* `handle`: HETCCL_NET_MODULE_HANDLE_BYTES, for the peer's connect. */
  int (*listen)(hetcclNetContext* context, int dev, void* handle,
                void** listenComm);
  /* Polled: 0 with *comm NULL means "call again". connect must get the
   * same `handle` bytes on every call for one connection (plugins keep
   * their state there). */
  int (*connect)(hetcclNetContext* context, int dev, void* handle,
                 void** sendComm);
  int (*accept)(hetcclNetContext* context, void* listenComm, void** recvComm);
  int (*closeSend)(hetcclNetContext* context, void* sendComm);
  int (*closeRecv)(hetcclNetContext* context, void* recvComm);
  int (*closeListen)(hetcclNetContext* context, void* listenComm);

  /* `type`: the ABI's NCCL_PTR_* of the memory. */
  int (*regMr)(hetcclNetContext* context, void* comm, void* data, size_t size,
               int type, void** mhandle);
  /* GPU memory through a DMA-BUF descriptor `fd` of which `data` is at
   * `offset` (the plugin imports it during the call). */
  int (*regMrDmaBuf)(hetcclNetContext* context, void* comm, void* data,
                     size_t size, int type, uint64_t offset, int fd,
                     void** mhandle);
  int (*deregMr)(hetcclNetContext* context, void* comm, void* mhandle);

  /* One message each; 0 with *request NULL means "post again later". */
  int (*isend)(hetcclNetContext* context, void* sendComm, void* data,
               size_t size, int tag, void* mhandle, void** request);
  int (*irecv)(hetcclNetContext* context, void* recvComm, void* data,
               size_t size, int tag, void* mhandle, void** request);
  /* After a receive into GPU memory; *request may be NULL: nothing to do. */
  int (*iflush)(hetcclNetContext* context, void* recvComm, void* data,
                size_t size, void* mhandle, void** request);
  /* `*bytes`: what a finished receive holds. A finished request is gone. */
  int (*test)(hetcclNetContext* context, void* request, int* done,
              size_t* bytes);
  /* Closes a plugin whose load went no further than its init or its
   * devices (one that works stays loaded: net_library.h). */
  void (*unload)(hetcclNetPlugin* plugin);
} hetcclNetModuleTable;

typedef const hetcclNetModuleTable* (*hetcclNetModuleEntry)(void);

#ifdef __cplusplus
}
#endif

#endif /* HETCCL_TRANSPORT_NET_NET_MODULE_H_ */
