/*
 * The NCCL network plugin ABI (the ncclNet_vN tables, v8 to v12) as HetCCL
 * declares it: written from the ABI's facts (the members each version
 * requires, in their order and with their types, and the constants'
 * values), under HetCCL's own names, so that the net module and the
 * stand-in test plugin need no NCCL header. A plugin exports the table of
 * version N as the symbol "ncclNetPlugin_vN". Where NCCL's own headers are
 * at hand, test_net_plugin_abi compares every offset and size with theirs.
 *
 * Members HetCCL never calls (device offload, virtual NICs, net attributes)
 * keep their place as plain function pointers of the right shape.
 */
#ifndef HETCCL_TRANSPORT_NET_MODULE_NET_PLUGIN_ABI_H_
#define HETCCL_TRANSPORT_NET_MODULE_NET_PLUGIN_ABI_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ncclResult_t: an int-sized enum; 0 is success. */
typedef int hetcclNetResult;
#define HETCCL_NET_SUCCESS 0
#define HETCCL_NET_SYSTEM_ERROR 2
#define HETCCL_NET_INTERNAL_ERROR 3
#define HETCCL_NET_REMOTE_ERROR 6

/* The bytes of a listen handle, exchanged out of band. */
#define HETCCL_NET_HANDLE_BYTES 128
/* Requests a comm must take in flight at once. */
#define HETCCL_NET_MAX_REQUESTS 32
/* ptrSupport bits. */
#define HETCCL_NET_PTR_HOST 0x1
#define HETCCL_NET_PTR_CUDA 0x2
#define HETCCL_NET_PTR_DMABUF 0x4
/* Logger levels (ncclDebugLogLevel). */
#define HETCCL_NET_LOG_WARN 2
#define HETCCL_NET_LOG_INFO 3
#define HETCCL_NET_LOG_ABORT 4
#define HETCCL_NET_LOG_TRACE 5
/* Profiler event types, the callback's `type`. */
#define HETCCL_NET_PROFILER_START 0
#define HETCCL_NET_TRAFFIC_CLASS_UNDEF (-1)

typedef void (*hetcclNetLogger)(int level, unsigned long flags,
                                const char* file, int line, const char* fmt,
                                ...);
typedef hetcclNetResult (*hetcclNetProfiler)(void** eventHandle, int type,
                                             void* phandle, int64_t pluginId,
                                             void* extData);

/* ncclNetDeviceHandle_vN (the same for v8 to v12). */
typedef struct {
  int netDeviceType;
  int netDeviceVersion;
  void* handle;
  size_t size;
  int needsProxyProgress;
} hetcclNetDeviceHandle;

/* ncclNetVDeviceProps: 4 devices up to v11, 8 in v12. */
typedef struct {
  int ndevs;
  int devs[4];
} hetcclNetVDeviceV9;
typedef struct {
  int ndevs;
  int devs[8];
} hetcclNetVDeviceV12;

/* ncclNetCommConfig_v10 .. v12. */
typedef struct {
  int trafficClass;
} hetcclNetCommConfig;

/* ncclNetCommAttr and ncclNetAttr (v11, v12). */
typedef struct {
  int32_t maxConcurrentPeers;
  int32_t minConcurrentPeers;
  int32_t maxFlowsPerPeer;
  int32_t minFlowsPerPeer;
} hetcclNetCommAttr;
typedef struct {
  hetcclNetCommAttr sendCommAttr;
  hetcclNetCommAttr recvCommAttr;
  uint32_t op;
  uint32_t algo;
  uint32_t proto;
} hetcclNetAttr;

/* The properties' members that every version from v8 on starts with. */
#define HETCCL_NET_PROPERTIES_HEAD \
  char* name;                      \
  char* pciPath;                   \
  uint64_t guid;                   \
  int ptrSupport;                  \
  int regIsGlobal;

typedef struct {
  HETCCL_NET_PROPERTIES_HEAD
  int speed; /* Mbps */
  int port;
  float latency; /* microseconds */
  int maxComms;
  int maxRecvs;
  int netDeviceType;
  int netDeviceVersion;
} hetcclNetPropertiesV8;

/* v9 and v10 (v10 is v9's layout). */
typedef struct {
  HETCCL_NET_PROPERTIES_HEAD
  int forceFlush;
  int speed;
  int port;
  float latency;
  int maxComms;
  int maxRecvs;
  int netDeviceType;
  int netDeviceVersion;
  hetcclNetVDeviceV9 vProps;
  size_t maxP2pBytes;
  size_t maxCollBytes;
} hetcclNetPropertiesV9;

typedef struct {
  HETCCL_NET_PROPERTIES_HEAD
  int forceFlush;
  int speed;
  int port;
  float latency;
  int maxComms;
  int maxRecvs;
  int netDeviceType;
  int netDeviceVersion;
  hetcclNetVDeviceV9 vProps;
  size_t maxP2pBytes;
  size_t maxCollBytes;
  int maxMultiRequestSize;
} hetcclNetPropertiesV11;

typedef struct {
  HETCCL_NET_PROPERTIES_HEAD
  int forceFlush;
  int speed;
  int port;
  float latency;
  int maxComms;
  int maxRecvs;
  int netDeviceType;
  int netDeviceVersion;
  hetcclNetVDeviceV12 vProps;
  size_t maxP2pBytes;
  size_t maxCollBytes;
  int maxMultiRequestSize;
  int16_t railId;
  int16_t planeId;
} hetcclNetPropertiesV12;

#undef HETCCL_NET_PROPERTIES_HEAD

/* The members from regMr to closeListen, alike in every version but for
 * the sizes of isend/irecv (int in v8, size_t later) and the profiler
 * handles (v10 on). */
#define HETCCL_NET_REGISTRATION                                           \
  hetcclNetResult (*regMr)(void* comm, void* data, size_t size, int type, \
                           void** mhandle);                               \
  hetcclNetResult (*regMrDmaBuf)(void* comm, void* data, size_t size,     \
                                 int type, uint64_t offset, int fd,       \
                                 void** mhandle);                         \
  hetcclNetResult (*deregMr)(void* comm, void* mhandle);
#define HETCCL_NET_COMPLETION                                               \
  hetcclNetResult (*iflush)(void* recvComm, int n, void** data, int* sizes, \
                            void** mhandles, void** request);               \
  hetcclNetResult (*test)(void* request, int* done, int* sizes);            \
  hetcclNetResult (*closeSend)(void* sendComm);                             \
  hetcclNetResult (*closeRecv)(void* recvComm);                             \
  hetcclNetResult (*closeListen)(void* listenComm);                         \
  hetcclNetResult (*getDeviceMr)(void* comm, void* mhandle, void** dptr);   \
  hetcclNetResult (*irecvConsumed)(void* recvComm, int n, void* request);

typedef struct {
  const char* name;
  hetcclNetResult (*init)(hetcclNetLogger logger);
  hetcclNetResult (*devices)(int* count);
  hetcclNetResult (*getProperties)(int dev, hetcclNetPropertiesV8* props);
  hetcclNetResult (*listen)(int dev, void* handle, void** listenComm);
  hetcclNetResult (*connect)(int dev, void* handle, void** sendComm,
                             hetcclNetDeviceHandle** sendDevComm);
  hetcclNetResult (*accept)(void* listenComm, void** recvComm,
                            hetcclNetDeviceHandle** recvDevComm);
  HETCCL_NET_REGISTRATION
  hetcclNetResult (*isend)(void* sendComm, void* data, int size, int tag,
                           void* mhandle, void** request);
  hetcclNetResult (*irecv)(void* recvComm, int n, void** data, int* sizes,
                           int* tags, void** mhandles, void** request);
  HETCCL_NET_COMPLETION
} hetcclNetV8;

typedef struct {
  const char* name;
  hetcclNetResult (*init)(hetcclNetLogger logger);
  hetcclNetResult (*devices)(int* count);
  hetcclNetResult (*getProperties)(int dev, hetcclNetPropertiesV9* props);
  hetcclNetResult (*listen)(int dev, void* handle, void** listenComm);
  hetcclNetResult (*connect)(int dev, void* handle, void** sendComm,
                             hetcclNetDeviceHandle** sendDevComm);
  hetcclNetResult (*accept)(void* listenComm, void** recvComm,
                            hetcclNetDeviceHandle** recvDevComm);
  HETCCL_NET_REGISTRATION
  hetcclNetResult (*isend)(void* sendComm, void* data, size_t size, int tag,
                           void* mhandle, void** request);
  hetcclNetResult (*irecv)(void* recvComm, int n, void** data, size_t* sizes,
                           int* tags, void** mhandles, void** request);
  HETCCL_NET_COMPLETION
  hetcclNetResult (*makeVDevice)(int* dev, hetcclNetVDeviceV9* props);
} hetcclNetV9;

typedef struct {
  const char* name;
  hetcclNetResult (*init)(hetcclNetLogger logger, hetcclNetProfiler profiler);
  hetcclNetResult (*devices)(int* count);
  hetcclNetResult (*getProperties)(int dev, hetcclNetPropertiesV9* props);
  hetcclNetResult (*listen)(int dev, void* handle, void** listenComm);
  hetcclNetResult (*connect)(int dev, hetcclNetCommConfig* config, void* handle,
                             void** sendComm,
                             hetcclNetDeviceHandle** sendDevComm);
  hetcclNetResult (*accept)(void* listenComm, void** recvComm,
                            hetcclNetDeviceHandle** recvDevComm);
  HETCCL_NET_REGISTRATION
  hetcclNetResult (*isend)(void* sendComm, void* data, size_t size, int tag,
                           void* mhandle, void* phandle, void** request);
  hetcclNetResult (*irecv)(void* recvComm, int n, void** data, size_t* sizes,
                           int* tags, void** mhandles, void** phandles,
                           void** request);
  HETCCL_NET_COMPLETION
  hetcclNetResult (*makeVDevice)(int* dev, hetcclNetVDeviceV9* props);
} hetcclNetV10;

/* v11 and v12: a context per communicator from init, passed to listen and
 * connect, ended by finalize. */
#define HETCCL_NET_V11_SHAPE(Properties, VDevice)                              \
  const char* name;                                                            \
  hetcclNetResult (*init)(void** context, uint64_t commId,                     \
                          hetcclNetCommConfig* config, hetcclNetLogger logger, \
                          hetcclNetProfiler profiler);                         \
  hetcclNetResult (*devices)(int* count);                                      \
  hetcclNetResult (*getProperties)(int dev, Properties* props);                \
  hetcclNetResult (*listen)(void* context, int dev, void* handle,              \
                            void** listenComm);                                \
  hetcclNetResult (*connect)(void* context, int dev, void* handle,             \
                             void** sendComm,                                  \
                             hetcclNetDeviceHandle** sendDevComm);             \
  hetcclNetResult (*accept)(void* listenComm, void** recvComm,                 \
                            hetcclNetDeviceHandle** recvDevComm);              \
  HETCCL_NET_REGISTRATION                                                      \
  hetcclNetResult (*isend)(void* sendComm, void* data, size_t size, int tag,   \
                           void* mhandle, void* phandle, void** request);      \
  hetcclNetResult (*irecv)(void* recvComm, int n, void** data, size_t* sizes,  \
                           int* tags, void** mhandles, void** phandles,        \
                           void** request);                                    \
  HETCCL_NET_COMPLETION                                                        \
  hetcclNetResult (*makeVDevice)(int* dev, VDevice* props);                    \
  hetcclNetResult (*finalize)(void* context);                                  \
  hetcclNetResult (*setNetAttr)(void* context, hetcclNetAttr* attr);

typedef struct {
  HETCCL_NET_V11_SHAPE(hetcclNetPropertiesV11, hetcclNetVDeviceV9)
} hetcclNetV11;

typedef struct {
  HETCCL_NET_V11_SHAPE(hetcclNetPropertiesV12, hetcclNetVDeviceV12)
} hetcclNetV12;

#undef HETCCL_NET_V11_SHAPE
#undef HETCCL_NET_REGISTRATION
#undef HETCCL_NET_COMPLETION

/* The versions this HetCCL takes, newest first, and their symbols. */
#define HETCCL_NET_NEWEST_VERSION 12
#define HETCCL_NET_OLDEST_VERSION 8

#ifdef __cplusplus
}
#endif

#endif /* HETCCL_TRANSPORT_NET_MODULE_NET_PLUGIN_ABI_H_ */
