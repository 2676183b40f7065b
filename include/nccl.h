/*
 * HetCCL public API: source- and binary-compatible with NCCL 2.28's nccl.h.
 *
 * Types, enum values, struct layouts and function signatures match NCCL so
 * that programs built against NCCL's header load HetCCL unchanged. Unlike
 * NCCL's header this one does not require the CUDA toolkit: without it,
 * cudaStream_t is declared with the same opaque type CUDA uses.
 */
#ifndef NCCL_H_
#define NCCL_H_

#include <limits.h>
#include <stddef.h>

#if defined(__CUDA_RUNTIME_H__) || defined(__CUDA_RUNTIME_API_H__) || \
    defined(__DRIVER_TYPES_H__)
/* The device runtime's header is in scope: cudaStream_t is already known. */
#else
typedef struct CUstream_st* cudaStream_t;
#endif

#define NCCL_MAJOR 2
#define NCCL_MINOR 28
#define NCCL_PATCH 9
#define NCCL_SUFFIX ""

/* NCCL's version encoding: 2.8.x and earlier used X*1000+Y*100+Z. */
#define NCCL_VERSION(X, Y, Z)                        \
  (((X) <= 2 && (Y) <= 8) ? (X)*1000 + (Y)*100 + (Z) \
                          : (X)*10000 + (Y)*100 + (Z))
#define NCCL_VERSION_CODE NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH)

#define HETCCL_MAJOR 0
#define HETCCL_MINOR 1
#define HETCCL_PATCH 0

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ncclComm* ncclComm_t;
typedef struct ncclWindow_vidmem* ncclWindow_t;
#define NCCL_COMM_NULL NULL

#define NCCL_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;

typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
  ncclNumResults = 8
} ncclResult_t;

#define NCCL_CONFIG_UNDEF_INT INT_MIN
#define NCCL_CONFIG_UNDEF_PTR NULL
#define NCCL_SPLIT_NOCOLOR -1
#define NCCL_UNDEF_FLOAT -1.0f

#define NCCL_WIN_DEFAULT 0x00
#define NCCL_WIN_COLL_SYMMETRIC 0x01
#define NCCL_WIN_REQUIRED_ALIGNMENT 4096

#define NCCL_CTA_POLICY_DEFAULT 0x00
#define NCCL_CTA_POLICY_EFFICIENCY 0x01
#define NCCL_CTA_POLICY_ZERO 0x02

#define NCCL_SHRINK_DEFAULT 0x00
#define NCCL_SHRINK_ABORT 0x01

#define NCCL_REVOKE_DEFAULT 0x00

/* Communicator configuration. The first three fields identify the layout a
 * caller was built with; HetCCL reads only the fields that the caller's
 * `size` covers, so callers built against older or newer headers work. */
typedef struct ncclConfig_v22800 {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int blocking;
  int cgaClusterSize;
  int minCTAs;
  int maxCTAs;
  const char* netName;
  int splitShare;
  int trafficClass;
  const char* commName;
  int collnetEnable;
  int CTAPolicy;
  int shrinkShare;
  int nvlsCTAs;
  int nChannelsPerNetPeer;
  int nvlinkCentricSched;
} ncclConfig_t;

#define NCCL_CONFIG_MAGIC 0xcafebeef

#define NCCL_CONFIG_INITIALIZER                                              \
  {                                                                          \
    sizeof(ncclConfig_t), NCCL_CONFIG_MAGIC,                                 \
        NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH),                    \
        NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT, \
        NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_PTR, NCCL_CONFIG_UNDEF_INT, \
        NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_PTR, NCCL_CONFIG_UNDEF_INT, \
        NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT, \
        NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT                         \
  }

typedef struct ncclSimInfo_v22200 {
  size_t size;
  unsigned int magic;
  unsigned int version;
  float estimatedTime;
} ncclSimInfo_t;

#define NCCL_SIM_INFO_MAGIC 0x74685283
#define NCCL_SIM_INFO_INITIALIZER                                          \
  {                                                                        \
    sizeof(ncclSimInfo_t), NCCL_SIM_INFO_MAGIC,                            \
        NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH), NCCL_UNDEF_FLOAT \
  }

typedef enum {
  ncclSum = 0,
  ncclProd = 1,
  ncclMax = 2,
  ncclMin = 3,
  ncclAvg = 4,
  ncclNumOps = 5,
  ncclMaxRedOp = 0x7fffffff
} ncclRedOp_t;

typedef enum {
  ncclInt8 = 0,
  ncclChar = 0,
  ncclUint8 = 1,
  ncclInt32 = 2,
  ncclInt = 2,
  ncclUint32 = 3,
  ncclInt64 = 4,
  ncclUint64 = 5,
  ncclFloat16 = 6,
  ncclHalf = 6,
  ncclFloat32 = 7,
  ncclFloat = 7,
  ncclFloat64 = 8,
  ncclDouble = 8,
  ncclBfloat16 = 9,
  ncclFloat8e4m3 = 10,
  ncclFloat8e5m2 = 11,
  ncclNumTypes = 12
} ncclDataType_t;

typedef enum {
  ncclScalarDevice = 0,
  ncclScalarHostImmediate = 1
} ncclScalarResidence_t;

/* Declares every entry point twice: ncclX and its profiling alias pncclX. */
#define HETCCL_DECLARE(ret, name, args) \
  ret nccl##name args;                  \
  ret pnccl##name args

HETCCL_DECLARE(ncclResult_t, MemAlloc, (void** ptr, size_t size));
HETCCL_DECLARE(ncclResult_t, MemFree, (void* ptr));
HETCCL_DECLARE(ncclResult_t, GetVersion, (int* version));
HETCCL_DECLARE(ncclResult_t, GetUniqueId, (ncclUniqueId * uniqueId));
HETCCL_DECLARE(ncclResult_t, CommInitRankConfig,
               (ncclComm_t * comm, int nranks, ncclUniqueId commId, int rank,
                ncclConfig_t* config));
HETCCL_DECLARE(ncclResult_t, CommInitRank,
               (ncclComm_t * comm, int nranks, ncclUniqueId commId, int rank));
HETCCL_DECLARE(ncclResult_t, CommInitAll,
               (ncclComm_t * comm, int ndev, const int* devlist));
HETCCL_DECLARE(ncclResult_t, CommInitRankScalable,
               (ncclComm_t * newcomm, int nranks, int myrank, int nId,
                ncclUniqueId* commIds, ncclConfig_t* config));
HETCCL_DECLARE(ncclResult_t, CommFinalize, (ncclComm_t comm));
HETCCL_DECLARE(ncclResult_t, CommDestroy, (ncclComm_t comm));
HETCCL_DECLARE(ncclResult_t, CommAbort, (ncclComm_t comm));
HETCCL_DECLARE(ncclResult_t, CommRevoke, (ncclComm_t comm, int revokeFlags));
HETCCL_DECLARE(ncclResult_t, CommSplit,
               (ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                ncclConfig_t* config));
HETCCL_DECLARE(ncclResult_t, CommShrink,
               (ncclComm_t comm, int* excludeRanksList, int excludeRanksCount,
                ncclComm_t* newcomm, ncclConfig_t* config, int shrinkFlags));
HETCCL_DECLARE(const char*, GetErrorString, (ncclResult_t result));
HETCCL_DECLARE(const char*, GetLastError, (ncclComm_t comm));
HETCCL_DECLARE(ncclResult_t, CommGetAsyncError,
               (ncclComm_t comm, ncclResult_t* asyncError));
HETCCL_DECLARE(ncclResult_t, CommCount, (const ncclComm_t comm, int* count));
HETCCL_DECLARE(ncclResult_t, CommCuDevice,
               (const ncclComm_t comm, int* device));
HETCCL_DECLARE(ncclResult_t, CommUserRank, (const ncclComm_t comm, int* rank));
HETCCL_DECLARE(ncclResult_t, CommRegister,
               (const ncclComm_t comm, void* buff, size_t size, void** handle));
HETCCL_DECLARE(ncclResult_t, CommDeregister,
               (const ncclComm_t comm, void* handle));
HETCCL_DECLARE(ncclResult_t, CommWindowRegister,
               (ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
                int winFlags));
HETCCL_DECLARE(ncclResult_t, CommWindowDeregister,
               (ncclComm_t comm, ncclWindow_t win));
HETCCL_DECLARE(ncclResult_t, RedOpCreatePreMulSum,
               (ncclRedOp_t * op, void* scalar, ncclDataType_t datatype,
                ncclScalarResidence_t residence, ncclComm_t comm));
HETCCL_DECLARE(ncclResult_t, RedOpDestroy, (ncclRedOp_t op, ncclComm_t comm));
HETCCL_DECLARE(ncclResult_t, Reduce,
               (const void* sendbuff, void* recvbuff, size_t count,
                ncclDataType_t datatype, ncclRedOp_t op, int root,
                ncclComm_t comm, cudaStream_t stream));
HETCCL_DECLARE(ncclResult_t, Bcast,
               (void* buff, size_t count, ncclDataType_t datatype, int root,
                ncclComm_t comm, cudaStream_t stream));
HETCCL_DECLARE(ncclResult_t, Broadcast,
               (const void* sendbuff, void* recvbuff, size_t count,
                ncclDataType_t datatype, int root, ncclComm_t comm,
                cudaStream_t stream));
HETCCL_DECLARE(ncclResult_t, AllReduce,
               (const void* sendbuff, void* recvbuff, size_t count,
                ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                cudaStream_t stream));
HETCCL_DECLARE(ncclResult_t, ReduceScatter,
               (const void* sendbuff, void* recvbuff, size_t recvcount,
                ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                cudaStream_t stream));
HETCCL_DECLARE(ncclResult_t, AllGather,
               (const void* sendbuff, void* recvbuff, size_t sendcount,
                ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream));
HETCCL_DECLARE(ncclResult_t, AlltoAll,
               (const void* sendbuff, void* recvbuff, size_t count,
                ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream));
HETCCL_DECLARE(ncclResult_t, Gather,
               (const void* sendbuff, void* recvbuff, size_t count,
                ncclDataType_t datatype, int root, ncclComm_t comm,
                cudaStream_t stream));
HETCCL_DECLARE(ncclResult_t, Scatter,
               (const void* sendbuff, void* recvbuff, size_t count,
                ncclDataType_t datatype, int root, ncclComm_t comm,
                cudaStream_t stream));
HETCCL_DECLARE(ncclResult_t, Send,
               (const void* sendbuff, size_t count, ncclDataType_t datatype,
                int peer, ncclComm_t comm, cudaStream_t stream));
HETCCL_DECLARE(ncclResult_t, Recv,
               (void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                ncclComm_t comm, cudaStream_t stream));
HETCCL_DECLARE(ncclResult_t, GroupStart, (void));
HETCCL_DECLARE(ncclResult_t, GroupEnd, (void));
HETCCL_DECLARE(ncclResult_t, GroupSimulateEnd, (ncclSimInfo_t * simInfo));

/* Device communicators (NCCL's device API) are opaque here: HetCCL accepts
 * and rejects them through the same entry points NCCL exports. */
struct ncclDevComm;
struct ncclDevCommRequirements;
HETCCL_DECLARE(ncclResult_t, DevCommCreate,
               (ncclComm_t comm, const struct ncclDevCommRequirements* reqs,
                struct ncclDevComm* outDevComm));
HETCCL_DECLARE(ncclResult_t, DevCommDestroy,
               (ncclComm_t comm, const struct ncclDevComm* devComm));

#undef HETCCL_DECLARE

#ifdef __cplusplus
}
#endif

#endif /* NCCL_H_ */
