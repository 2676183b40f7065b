/*
 * The table a device-runtime module exports: libhetccl-cuda.so (CUDA) and
 * libhetccl-hip.so (HIP) implement it over their vendor runtime, and the
 * core, which links neither, reaches the GPU only through it. Plain C, so
 * that the core and a module built by another compiler (nvcc, hipcc) agree
 * on its layout; the ABI version guards against a module of another build.
 *
 * Every function returns 0 on success, or the runtime's own error code,
 * which errorString() turns into the runtime's message. Streams and events
 * are the runtime's handles (cudaStream_t / hipStream_t, cudaEvent_t /
 * hipEvent_t) passed as void*. Device pointers are the runtime's unified
 * addresses; host-mapped memory has the same address on host and device.
 */
#ifndef HETCCL_RUNTIME_DEVICE_DEVICE_MODULE_H_
#define HETCCL_RUNTIME_DEVICE_DEVICE_MODULE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HETCCL_DEVICE_MODULE_ABI 9
/* The module's one exported function returns its table. */
#define HETCCL_DEVICE_MODULE_ENTRY "hetcclDeviceModule"

/* What a word is raised to so that every wait on it ends (a failure, an
 * abort): above any sequence number, and a positive difference from each
 * under CUDA's cyclic comparison. */
#define HETCCL_DEVICE_WAIT_RELEASED (UINT64_C(1) << 62)

/* The most inputs one reduction launch combines. */
#define HETCCL_DEVICE_MAX_SOURCES 8

/* dst[i] = srcs[0][i] (op) srcs[1][i] (op) ... in source order, with the
 * semantics of the host collectives (runtime/host/host_reduce.h): accumulation
 * in float for fp16/bf16/fp8, in the type itself otherwise (integers wrap);
 * NaN propagates through max/min; one rounding at the end. dst may equal a
 * source. */
typedef struct {
  void* dst;
  const void* srcs[HETCCL_DEVICE_MAX_SOURCES];
  int nsrcs;         /* 1 .. HETCCL_DEVICE_MAX_SOURCES */
  size_t count;      /* elements */
  int dtype;         /* ncclDataType_t */
  int op;            /* ncclSum, ncclProd, ncclMax or ncclMin */
  int applyPreScale; /* multiply every input by preScale first */
  uint64_t preScale; /* one element of dtype, by value (low bytes) */
  int applyDivisor;  /* divide the result by divisor (ncclAvg) */
  uint64_t divisor;
} hetcclDeviceReduction;

/* The low-latency collectives: a small all-reduce, reduce-scatter,
 * all-gather or broadcast among the GPU ranks of one host as one kernel
 * per rank. Each rank writes its input into its own line area in
 * host-mapped memory, as 8-byte lines that hold 4 bytes of data in their
 * low half and a flag in their high half, so that one store carries both
 * and a reader needs one poll per line (runtime/device/low_latency_lines.h).
 * Every rank then reads the lines it needs of the other ranks, waiting for
 * each until its flag is this operation's: reductions combine all inputs
 * in rank order as reduceAsync does, so every rank gets the same bits.
 *
 * Operations alternate between the two halves of every area, and the
 * operation's count (its flag and half) is kept in device memory that the
 * kernel itself advances, so the same launch replays correctly from a CUDA
 * graph. A rank reuses a half only two operations later, by when every
 * other rank has finished reading it, provided every rank launches its
 * operations one after another (one stream, or streams ordered by events)
 * and in the same order. Reaching `release` != 0 ends every wait (the
 * results are then undefined). */
#define HETCCL_DEVICE_LL_BLOCKS 4 /* every launch; each keeps its count */

typedef enum {
  hetcclLowLatencyAllReduce = 0,
  hetcclLowLatencyReduceScatter = 1, /* input: nranks parts of count */
  hetcclLowLatencyAllGather = 2,     /* output: nranks parts of count */
  hetcclLowLatencyBroadcast = 3
} hetcclLowLatencyKind;

typedef struct {
  int kind; /* hetcclLowLatencyKind */
  int root; /* broadcast */
  /* dst: the output; srcs[0]: this rank's input (nsrcs 1); count: NCCL's
   * count of the collective (of one rank's part for reduce-scatter and
   * all-gather); dtype; and for reductions op, preScale and divisor as
   * for reduceAsync. */
  hetcclDeviceReduction reduction;
  int rank;
  int nranks; /* 2 .. HETCCL_DEVICE_MAX_SOURCES */
  /* Every rank's line area, host-mapped and 16-byte aligned: two halves of
   * `halfLines` lines, zero before the first operation. */
  uint64_t* areas[HETCCL_DEVICE_MAX_SOURCES];
  /* At least 2 lines per 8 bytes of a rank's input (or part of 8 bytes). */
  size_t halfLines;
  /* Device memory, HETCCL_DEVICE_LL_BLOCKS words, zero before the first
   * operation: the operations done so far. */
  uint64_t* counts;
  const uint64_t* release; /* host-mapped */
} hetcclDeviceLowLatencyCollective;

/* A small piece of a staged transfer moved by one kernel, where a stream
 * would otherwise wait, copy and write in three steps (the GPU engine's
 * rings between hosts, engine/gpu/proxy/staged_link.h): the kernel waits
 * until *waitWord >= waitValue as waitValue64 compares (no wait where
 * waitWord is null), copies `bytes` from src to dst (either may be
 * host-mapped memory, read and written past the GPU's caches), makes the
 * copy visible to the host, then stores `signalValue` into *signalWord
 * (host-mapped; no signal where it is null). Each aligned 8-byte word is
 * stored whole, so a host thread reading words of dst sees each either
 * before or after. Raising waitWord to HETCCL_DEVICE_WAIT_RELEASED ends
 * the wait (the copy is then undefined). */
typedef struct {
  void* dst;
  const void* src;
  size_t bytes;
  const uint64_t* waitWord;
  uint64_t waitValue;
  uint64_t* signalWord;
  uint64_t signalValue;
} hetcclDeviceStagedCopy;

typedef enum {
  hetcclMemoryUnknown = 0, /* not known to the runtime: plain host memory */
  hetcclMemoryHost = 1,    /* pinned or registered host memory */
  hetcclMemoryDevice = 2,
  hetcclMemoryManaged = 3
} hetcclMemoryKind;

typedef struct {
  uint32_t abiVersion;     /* HETCCL_DEVICE_MODULE_ABI */
  const char* runtimeName; /* "cuda" or "hip" */

  const char* (*errorString)(int code);
  /* The runtime's and the driver's versions (e.g. 13000). */
  int (*versions)(int* runtimeVersion, int* driverVersion);

  int (*deviceCount)(int* count);
  int (*getDevice)(int* device);
  int (*setDevice)(int device);
  /* "0000:3b:00.0" into `busId` (at least 16 bytes). */
  int (*deviceBusId)(int device, char* busId, int length);
  int (*memoryKind)(const void* pointer, int* kind /* hetcclMemoryKind */);

  int (*deviceAlloc)(void** pointer, size_t bytes);
  int (*deviceFree)(void* pointer);
  /* Pinned host memory, mapped into every device's address space. */
  int (*hostAlloc)(void** pointer, size_t bytes);
  int (*hostFree)(void* pointer);
  /* Pins and maps existing host memory (a shared segment, say). */
  int (*hostRegister)(void* pointer, size_t bytes);
  int (*hostUnregister)(void* pointer);

  /* Streams that do not synchronise with the legacy default stream. */
  int (*streamCreate)(void** stream);
  int (*streamDestroy)(void* stream);
  int (*streamSynchronize)(void* stream);
  /* *idle = 1 when everything queued on the stream has finished. */
  int (*streamQuery)(void* stream, int* idle);
  /* *capturing = 1 while the stream is being captured into a graph. */
  int (*streamIsCapturing)(void* stream, int* capturing);

  /* Events without timing, for ordering and completion only. */
  int (*eventCreate)(void** event);
  int (*eventDestroy)(void* event);
  int (*eventRecord)(void* event, void* stream);
  int (*eventQuery)(void* event, int* done);
  int (*eventSynchronize)(void* event);
  int (*streamWaitEvent)(void* stream, void* event);

  /* Any direction; both pointers are unified addresses. */
  int (*copyAsync)(void* dst, const void* src, size_t bytes, void* stream);
  /* `height` rows of `width` bytes, each row `dpitch` after the one
   * before at the destination and `spitch` at the source: one copy of
   * several pieces that lie apart (a staging ring's slots). */
  int (*copy2DAsync)(void* dst, size_t dpitch, const void* src, size_t spitch,
                     size_t width, size_t height, void* stream);
  /* Stream memory operations on host-mapped 64-bit words: the stream
   * stores `value` once the work before it is done; the stream waits until
   * *address >= value (the writer only ever increases the word). CUDA
   * compares cyclically, (int64_t)(*address - value) >= 0, so words and
   * values stay below 2^63: a wait is released by raising its word to
   * HETCCL_DEVICE_WAIT_RELEASED, never to UINT64_MAX. */
  int (*writeValue64)(void* stream, uint64_t* address, uint64_t value);
  int (*waitValue64)(void* stream, const uint64_t* address, uint64_t value);
  /* The stream waits until (*address & bits) != 0. Flags that writers set
   * to one fixed value and readers reset to another need no sequence
   * number, so the same enqueued work can run again (a CUDA graph's
   * replays); a wait is released by setting every bit. */
  int (*waitBits64)(void* stream, const uint64_t* address, uint64_t bits);

  int (*reduceAsync)(const hetcclDeviceReduction* reduction, void* stream);
  int (*lowLatencyCollective)(
      const hetcclDeviceLowLatencyCollective* collective, void* stream);
  int (*stagedCopy)(const hetcclDeviceStagedCopy* copy, void* stream);
  /* Loads every reduction kernel on the current device now. With lazy
   * loading (CUDA's default) a kernel's first launch can wait for work
   * already queued on the device; if that work waits on the host (a
   * stream held back by a word the caller sets later), it never ends. */
  int (*loadKernels)(void);

  /* Events that also keep the time they were reached (eventDestroy frees
   * them), and the milliseconds between two such events once both were. */
  int (*timingEventCreate)(void** event);
  int (*eventElapsedMs)(void* start, void* end, float* milliseconds);

  /* DMA-BUF (Linux) of device memory, for NICs that read and write it
   * themselves (a network plugin's regMrDmaBuf): *supported = 1 when the
   * current device and its driver export it; exportDmaBuf gives a file
   * descriptor of the whole allocation that holds `pointer` (the caller
   * closes it) and `pointer`'s offset in it. An error where the runtime has
   * no such export. */
  int (*dmaBufSupported)(int* supported);
  int (*exportDmaBuf)(const void* pointer, int* fd, uint64_t* offset);
} hetcclDeviceModuleTable;

typedef const hetcclDeviceModuleTable* (*hetcclDeviceModuleEntry)(void);

#ifdef __cplusplus
}
#endif

#endif /* HETCCL_RUNTIME_DEVICE_DEVICE_MODULE_H_ */
