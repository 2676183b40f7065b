// HetCCL's declarations of the NCCL net plugin ABI (net_plugin_abi.h)
// against NCCL's own headers, where the build found them
// (HETCCL_NCCL_NET_HEADERS: the snapshot in ../shared/third_party by
// default): every member of every table and properties struct from v8 to
// v12 at the same offset, every struct of the same size. Skipped without
// the headers.
#include <gtest/gtest.h>

#include <cstddef>

#include "transport/net/module/net_plugin_abi.h"

#if __has_include(<net.h>) && __has_include(<net_v12.h>)
#include <net.h>
#define HETCCL_HAVE_NCCL_NET_HEADERS 1
#endif

namespace hetccl {
namespace {

#ifdef HETCCL_HAVE_NCCL_NET_HEADERS

#define SAME(ours, theirs, member)                            \
  EXPECT_EQ(offsetof(ours, member), offsetof(theirs, member)) \
      << #ours "." #member;                                   \
  EXPECT_EQ(sizeof(ours::member), sizeof(theirs::member)) << #ours "." #member

#define SAME_PROPERTIES_HEAD(ours, theirs) \
  SAME(ours, theirs, name);                \
  SAME(ours, theirs, pciPath);             \
  SAME(ours, theirs, guid);                \
  SAME(ours, theirs, ptrSupport);          \
  SAME(ours, theirs, regIsGlobal);         \
  SAME(ours, theirs, speed);               \
  SAME(ours, theirs, port);                \
  SAME(ours, theirs, latency);             \
  SAME(ours, theirs, maxComms);            \
  SAME(ours, theirs, maxRecvs);            \
  SAME(ours, theirs, netDeviceType);       \
  SAME(ours, theirs, netDeviceVersion);    \
  EXPECT_EQ(sizeof(ours), sizeof(theirs)) << #ours

#define SAME_PROPERTIES_V9(ours, theirs) \
  SAME_PROPERTIES_HEAD(ours, theirs);    \
  SAME(ours, theirs, forceFlush);        \
  SAME(ours, theirs, vProps);            \
  SAME(ours, theirs, maxP2pBytes);       \
  SAME(ours, theirs, maxCollBytes)

#define SAME_TABLE(ours, theirs)     \
  SAME(ours, theirs, name);          \
  SAME(ours, theirs, init);          \
  SAME(ours, theirs, devices);       \
  SAME(ours, theirs, getProperties); \
  SAME(ours, theirs, listen);        \
  SAME(ours, theirs, connect);       \
  SAME(ours, theirs, accept);        \
  SAME(ours, theirs, regMr);         \
  SAME(ours, theirs, regMrDmaBuf);   \
  SAME(ours, theirs, deregMr);       \
  SAME(ours, theirs, isend);         \
  SAME(ours, theirs, irecv);         \
  SAME(ours, theirs, iflush);        \
  SAME(ours, theirs, test);          \
  SAME(ours, theirs, closeSend);     \
  SAME(ours, theirs, closeRecv);     \
  SAME(ours, theirs, closeListen);   \
  SAME(ours, theirs, getDeviceMr);   \
  SAME(ours, theirs, irecvConsumed); \
  EXPECT_EQ(sizeof(ours), sizeof(theirs)) << #ours

TEST(NetPluginAbi, PropertiesMatchNcclsLayouts) {
  SAME_PROPERTIES_HEAD(hetcclNetPropertiesV8, ncclNetProperties_v8_t);
  SAME_PROPERTIES_V9(hetcclNetPropertiesV9, ncclNetProperties_v9_t);
  SAME_PROPERTIES_V9(hetcclNetPropertiesV9, ncclNetProperties_v10_t);
  SAME_PROPERTIES_V9(hetcclNetPropertiesV11, ncclNetProperties_v11_t);
  SAME(hetcclNetPropertiesV11, ncclNetProperties_v11_t, maxMultiRequestSize);
  SAME_PROPERTIES_V9(hetcclNetPropertiesV12, ncclNetProperties_v12_t);
  SAME(hetcclNetPropertiesV12, ncclNetProperties_v12_t, maxMultiRequestSize);
  SAME(hetcclNetPropertiesV12, ncclNetProperties_v12_t, railId);
  SAME(hetcclNetPropertiesV12, ncclNetProperties_v12_t, planeId);
}

TEST(NetPluginAbi, TablesMatchNcclsLayouts) {
  SAME_TABLE(hetcclNetV8, ncclNet_v8_t);
  SAME_TABLE(hetcclNetV9, ncclNet_v9_t);
  SAME(hetcclNetV9, ncclNet_v9_t, makeVDevice);
  SAME_TABLE(hetcclNetV10, ncclNet_v10_t);
  SAME(hetcclNetV10, ncclNet_v10_t, makeVDevice);
  SAME_TABLE(hetcclNetV11, ncclNet_v11_t);
  SAME(hetcclNetV11, ncclNet_v11_t, finalize);
  SAME(hetcclNetV11, ncclNet_v11_t, setNetAttr);
  SAME_TABLE(hetcclNetV12, ncclNet_v12_t);
  SAME(hetcclNetV12, ncclNet_v12_t, finalize);
  SAME(hetcclNetV12, ncclNet_v12_t, setNetAttr);
}

TEST(NetPluginAbi, ConstantsMatchNcclsValues) {
  EXPECT_EQ(HETCCL_NET_HANDLE_BYTES, NCCL_NET_HANDLE_MAXSIZE);
  EXPECT_EQ(HETCCL_NET_MAX_REQUESTS, NCCL_NET_MAX_REQUESTS);
  EXPECT_EQ(HETCCL_NET_PTR_HOST, NCCL_PTR_HOST);
  EXPECT_EQ(HETCCL_NET_PTR_CUDA, NCCL_PTR_CUDA);
  EXPECT_EQ(HETCCL_NET_PTR_DMABUF, NCCL_PTR_DMABUF);
  EXPECT_EQ(HETCCL_NET_LOG_WARN, NCCL_LOG_WARN);
  EXPECT_EQ(HETCCL_NET_LOG_INFO, NCCL_LOG_INFO);
  EXPECT_EQ(HETCCL_NET_LOG_TRACE, NCCL_LOG_TRACE);
  EXPECT_EQ(HETCCL_NET_SYSTEM_ERROR, ncclSystemError);
  EXPECT_EQ(HETCCL_NET_INTERNAL_ERROR, ncclInternalError);
  EXPECT_EQ(HETCCL_NET_REMOTE_ERROR, ncclRemoteError);
  EXPECT_EQ(sizeof(hetcclNetResult), sizeof(ncclResult_t));
  EXPECT_EQ(sizeof(hetcclNetDeviceHandle), sizeof(ncclNetDeviceHandle_v12_t));
}

#else

TEST(NetPluginAbi, SkippedWithoutNcclsHeaders) {
  GTEST_SKIP() << "NCCL's net plugin headers were not found "
                  "(HETCCL_NCCL_NET_HEADERS)";
}

#endif

}  // namespace
}  // namespace hetccl
