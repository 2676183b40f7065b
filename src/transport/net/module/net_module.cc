// libhetccl-net.so: the net module's table (transport/net/net_module.h)
// over an NCCL network plugin of ABI v8 to v12 (net_plugin_abi.h). Each
// call goes to the table of the version the plugin was loaded with; what
// the versions differ in is settled here, one member at a time.
#include <dlfcn.h>
#include <limits.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>

#include "transport/net/module/net_plugin_abi.h"
#include "transport/net/net_module.h"

struct hetcclNetPlugin {
  void* library;
  int version;
  const void* table;
  // Before v11 a plugin is initialised once per process: the first init's
  // result stands for every later one.
  bool initialised;
  hetcclNetResult initResult;
};

struct hetcclNetContext {
  hetcclNetPlugin* plugin;
  void* pluginContext;  // v11 on
  hetcclNetCommConfig config;
};

namespace {

// The ABI's logger is a plain function with no user pointer, so where its
// lines go can only be kept here; every load sets the same core sink.
std::atomic<hetcclNetLogSink> logSink{nullptr};

void logFromPlugin(int level, unsigned long, const char* file, int line,
                   const char* fmt, ...) {
  hetcclNetLogSink sink = logSink.load();
  if (sink == nullptr || fmt == nullptr) return;
  char text[1024];
  va_list args;
  va_start(args, fmt);
  vsnprintf(text, sizeof text, fmt, args);
  va_end(args);
  size_t length = strlen(text);
  while (length > 0 && text[length - 1] == '\n') text[--length] = '\0';
  char message[1200];
  snprintf(message, sizeof message, "%s:%d %s", file ? file : "?", line, text);
  sink(level, message);
}

// HetCCL hands the plugin no profiler handles (its isend/irecv phandles are
// NULL), so a plugin's events have nowhere to go: each is accepted and
// given no handle.
hetcclNetResult ignoreProfilerEvent(void** eventHandle, int, void*, int64_t,
                                    void*) {
  if (eventHandle != nullptr) *eventHandle = nullptr;
  return HETCCL_NET_SUCCESS;
}

template <typename Table>
constexpr int kVersionOf = 0;
template <>
constexpr int kVersionOf<hetcclNetV8> = 8;
template <>
constexpr int kVersionOf<hetcclNetV9> = 9;
template <>
constexpr int kVersionOf<hetcclNetV10> = 10;
template <>
constexpr int kVersionOf<hetcclNetV11> = 11;
template <>
constexpr int kVersionOf<hetcclNetV12> = 12;

// Calls `f` with the plugin's table as its own version's type.
template <typename F>
auto withTable(const hetcclNetPlugin* plugin, F&& f) {
  switch (plugin->version) {
    case 8:
      return f(*static_cast<const hetcclNetV8*>(plugin->table));
    case 9:
      return f(*static_cast<const hetcclNetV9*>(plugin->table));
    case 10:
      return f(*static_cast<const hetcclNetV10*>(plugin->table));
    case 11:
      return f(*static_cast<const hetcclNetV11*>(plugin->table));
    default:
      return f(*static_cast<const hetcclNetV12*>(plugin->table));
  }
}

template <typename Table>
constexpr bool kHasContexts = kVersionOf<Table> >= 11;

void setError(char* error, size_t bytes, const std::string& text) {
  if (bytes > 0) snprintf(error, bytes, "%s", text.c_str());
}

int load(const char* path, hetcclNetLogSink log, hetcclNetPlugin** plugin,
         char* error, size_t errorBytes) {
  *plugin = nullptr;
  logSink.store(log);
  void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    setError(error, errorBytes, why ? why : "dlopen failed");
    return -1;
  }
  for (int v = HETCCL_NET_NEWEST_VERSION; v >= HETCCL_NET_OLDEST_VERSION; --v) {
    const std::string symbol = "ncclNetPlugin_v" + std::to_string(v);
    if (const void* table = dlsym(library, symbol.c_str())) {
      *plugin = new hetcclNetPlugin{library, v, table, false, 0};
      return 0;
    }
  }
  dlclose(library);
  setError(error, errorBytes,
           "exports no ncclNetPlugin_v8 .. ncclNetPlugin_v12 (a plugin of an "
           "older or newer NCCL?)");
  return -1;
}

void unload(hetcclNetPlugin* plugin) {
  dlclose(plugin->library);
  delete plugin;
}

int version(const hetcclNetPlugin* plugin) { return plugin->version; }

const char* name(const hetcclNetPlugin* plugin) {
  return withTable(plugin, [](const auto& t) {
    return t.name != nullptr ? t.name : "(unnamed)";
  });
}

int init(hetcclNetPlugin* plugin, uint64_t commId, int trafficClass,
         hetcclNetContext** context) {
  auto* made = new hetcclNetContext{plugin, nullptr, {trafficClass}};
  hetcclNetResult result = withTable(plugin, [&](const auto& t) {
    using Table = std::decay_t<decltype(t)>;
    if constexpr (kHasContexts<Table>) {
      return t.init(&made->pluginContext, commId, &made->config, logFromPlugin,
                    ignoreProfilerEvent);
    } else {
      if (!plugin->initialised) {
        if constexpr (kVersionOf<Table> == 10)
          plugin->initResult = t.init(logFromPlugin, ignoreProfilerEvent);
        else
          plugin->initResult = t.init(logFromPlugin);
        plugin->initialised = true;
      }
      return plugin->initResult;
    }
  });
  if (result != HETCCL_NET_SUCCESS) {
    delete made;
    return result;
  }
  *context = made;
  return HETCCL_NET_SUCCESS;
}

int finalize(hetcclNetContext* context) {
  hetcclNetResult result = withTable(context->plugin, [&](const auto& t) {
    using Table = std::decay_t<decltype(t)>;
    if constexpr (kHasContexts<Table>)
      if (t.finalize != nullptr) return t.finalize(context->pluginContext);
    return HETCCL_NET_SUCCESS;
  });
  delete context;
  return result;
}

int devices(hetcclNetPlugin* plugin, int* count) {
  return withTable(plugin, [&](const auto& t) { return t.devices(count); });
}

void copyText(char* to, size_t bytes, const char* from) {
  snprintf(to, bytes, "%s", from != nullptr ? from : "");
}

// The properties type of each version's getProperties.
template <typename Table>
struct PropertiesOf;
template <>
struct PropertiesOf<hetcclNetV8> {
  using Type = hetcclNetPropertiesV8;
};
template <>
struct PropertiesOf<hetcclNetV9> {
  using Type = hetcclNetPropertiesV9;
};
template <>
struct PropertiesOf<hetcclNetV10> {
  using Type = hetcclNetPropertiesV9;
};
template <>
struct PropertiesOf<hetcclNetV11> {
  using Type = hetcclNetPropertiesV11;
};
template <>
struct PropertiesOf<hetcclNetV12> {
  using Type = hetcclNetPropertiesV12;
};

int properties(hetcclNetPlugin* plugin, int dev, hetcclNetDeviceInfo* info) {
  return withTable(plugin, [&](const auto& t) {
    using Table = std::decay_t<decltype(t)>;
    typename PropertiesOf<Table>::Type p;
    memset(&p, 0, sizeof p);
    hetcclNetResult result = t.getProperties(dev, &p);
    if (result != HETCCL_NET_SUCCESS) return result;
    memset(info, 0, sizeof *info);
    copyText(info->name, sizeof info->name, p.name);
    copyText(info->pciPath, sizeof info->pciPath, p.pciPath);
    info->guid = p.guid;
    info->ptrSupport = p.ptrSupport;
    info->regIsGlobal = p.regIsGlobal;
    info->speedMbps = p.speed;
    info->port = p.port;
    info->latencyUs = p.latency;
    info->maxComms = p.maxComms;
    info->maxRecvs = p.maxRecvs;
    // v8 sends sizes as int; later versions say their own limit (0: none
    // said, where the int limit is the safe one).
    info->maxP2pBytes = INT_MAX;
    if constexpr (kVersionOf<Table> >= 9) {
      info->forceFlush = p.forceFlush;
      if (p.maxP2pBytes > 0) info->maxP2pBytes = p.maxP2pBytes;
    }
    return HETCCL_NET_SUCCESS;
  });
}

int listen(hetcclNetContext* context, int dev, void* handle,
           void** listenComm) {
  return withTable(context->plugin, [&](const auto& t) {
    using Table = std::decay_t<decltype(t)>;
    if constexpr (kHasContexts<Table>)
      return t.listen(context->pluginContext, dev, handle, listenComm);
    else
      return t.listen(dev, handle, listenComm);
  });
}

int connect(hetcclNetContext* context, int dev, void* handle, void** sendComm) {
  return withTable(context->plugin, [&](const auto& t) {
    using Table = std::decay_t<decltype(t)>;
    hetcclNetDeviceHandle* noOffload = nullptr;
    if constexpr (kHasContexts<Table>)
      return t.connect(context->pluginContext, dev, handle, sendComm,
                       &noOffload);
    else if constexpr (kVersionOf<Table> == 10)
      return t.connect(dev, &context->config, handle, sendComm, &noOffload);
    else
      return t.connect(dev, handle, sendComm, &noOffload);
  });
}

int accept(hetcclNetContext* context, void* listenComm, void** recvComm) {
  return withTable(context->plugin, [&](const auto& t) {
    hetcclNetDeviceHandle* noOffload = nullptr;
    return t.accept(listenComm, recvComm, &noOffload);
  });
}

int closeSend(hetcclNetContext* context, void* comm) {
  return withTable(context->plugin,
                   [&](const auto& t) { return t.closeSend(comm); });
}

int closeRecv(hetcclNetContext* context, void* comm) {
  return withTable(context->plugin,
                   [&](const auto& t) { return t.closeRecv(comm); });
}

int closeListen(hetcclNetContext* context, void* comm) {
  return withTable(context->plugin,
                   [&](const auto& t) { return t.closeListen(comm); });
}

int regMr(hetcclNetContext* context, void* comm, void* data, size_t size,
          int type, void** mhandle) {
  return withTable(context->plugin, [&](const auto& t) {
    return t.regMr(comm, data, size, type, mhandle);
  });
}

// A plugin without regMrDmaBuf (the ABI lets it be null) takes no DMA-BUF.
int regMrDmaBuf(hetcclNetContext* context, void* comm, void* data, size_t size,
                int type, uint64_t offset, int fd, void** mhandle) {
  return withTable(context->plugin, [&](const auto& t) {
    return t.regMrDmaBuf == nullptr
               ? HETCCL_NET_INTERNAL_ERROR
               : t.regMrDmaBuf(comm, data, size, type, offset, fd, mhandle);
  });
}

int deregMr(hetcclNetContext* context, void* comm, void* mhandle) {
  return withTable(context->plugin,
                   [&](const auto& t) { return t.deregMr(comm, mhandle); });
}

int isend(hetcclNetContext* context, void* comm, void* data, size_t size,
          int tag, void* mhandle, void** request) {
  return withTable(context->plugin, [&](const auto& t) {
    using Table = std::decay_t<decltype(t)>;
    if constexpr (kVersionOf<Table> == 8) {
      if (size > INT_MAX) return HETCCL_NET_INTERNAL_ERROR;
      return t.isend(comm, data, static_cast<int>(size), tag, mhandle, request);
    } else if constexpr (kVersionOf<Table> == 9) {
      return t.isend(comm, data, size, tag, mhandle, request);
    } else {
      return t.isend(comm, data, size, tag, mhandle, nullptr, request);
    }
  });
}

int irecv(hetcclNetContext* context, void* comm, void* data, size_t size,
          int tag, void* mhandle, void** request) {
  return withTable(context->plugin, [&](const auto& t) {
    using Table = std::decay_t<decltype(t)>;
    void* buffers[1] = {data};
    int tags[1] = {tag};
    void* mhandles[1] = {mhandle};
    if constexpr (kVersionOf<Table> == 8) {
      if (size > INT_MAX) return HETCCL_NET_INTERNAL_ERROR;
      int sizes[1] = {static_cast<int>(size)};
      return t.irecv(comm, 1, buffers, sizes, tags, mhandles, request);
    } else if constexpr (kVersionOf<Table> == 9) {
      size_t sizes[1] = {size};
      return t.irecv(comm, 1, buffers, sizes, tags, mhandles, request);
    } else {
      size_t sizes[1] = {size};
      void* phandles[1] = {nullptr};
      return t.irecv(comm, 1, buffers, sizes, tags, mhandles, phandles,
                     request);
    }
  });
}

int iflush(hetcclNetContext* context, void* comm, void* data, size_t size,
           void* mhandle, void** request) {
  *request = nullptr;
  if (size > INT_MAX) return HETCCL_NET_INTERNAL_ERROR;
  return withTable(context->plugin, [&](const auto& t) {
    if (t.iflush == nullptr) return HETCCL_NET_SUCCESS;
    void* buffers[1] = {data};
    int sizes[1] = {static_cast<int>(size)};
    void* mhandles[1] = {mhandle};
    return t.iflush(comm, 1, buffers, sizes, mhandles, request);
  });
}

int test(hetcclNetContext* context, void* request, int* done, size_t* bytes) {
  int size = 0;
  hetcclNetResult result = withTable(context->plugin, [&](const auto& t) {
    return t.test(request, done, &size);
  });
  if (bytes != nullptr) *bytes = size > 0 ? static_cast<size_t>(size) : 0;
  return result;
}

const hetcclNetModuleTable kTable = {
    HETCCL_NET_MODULE_ABI,
    load,
    version,
    name,
    init,
    finalize,
    devices,
    properties,
    listen,
    connect,
    accept,
    closeSend,
    closeRecv,
    closeListen,
    regMr,
    regMrDmaBuf,
    deregMr,
    isend,
    irecv,
    iflush,
    test,
    unload,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const hetcclNetModuleTable*
hetcclNetModule() {
  return &kTable;
}
