#include "transport/net/net_library.h"

#include <atomic>

#include "transport/net/environment_guard.h"
#include "transport/net/net_plugin_name.h"
#include "transport/net/net_settings.h"
#include "util/log.h"
#include "util/module_path.h"

namespace hetccl {
namespace {

// The plugin's own log lines, as HetCCL's (subsystem NET).
void logPluginLine(int level, const char* message) {
  if (level <= 2 || level == 4)  // warn, abort (and anything unknown below)
    LOG_WARN(kLogNet, "net plugin: %s", message);
  else if (level == 3)
    LOG_INFO(kLogNet, "net plugin: %s", message);
  else
    LOG_TRACE(kLogNet, "net plugin: %s", message);
}

const char* resultName(int result) {
  switch (result) {
    case ncclUnhandledCudaError:
      return "ncclUnhandledCudaError";
    case ncclSystemError:
      return "ncclSystemError";
    case ncclInternalError:
      return "ncclInternalError";
    case ncclInvalidArgument:
      return "ncclInvalidArgument";
    case ncclInvalidUsage:
      return "ncclInvalidUsage";
    case ncclRemoteError:
      return "ncclRemoteError";
    default:
      return "an unknown result";
  }
}

// Puts back what `what` changed in the environment, and says so.
void restoreEnvironment(EnvironmentGuard& guard, const std::string& who,
                        const char* what) {
  const std::vector<EnvironmentChange> changes = guard.restore();
  if (!changes.empty())
    LOG_INFO(kLogNet,
             "%s changed the environment during %s: %s; restored, so that "
             "HetCCL and the program see it as it was",
             who.c_str(), what, describeChanges(changes).c_str());
}

}  // namespace

const NetLibrary* NetLibrary::load(
    const std::string& modulePath,
    const std::optional<std::string>& pluginSetting) {
  return new NetLibrary(modulePath, pluginSetting);
}

NetLibrary::NetLibrary(const std::string& modulePath,
                       const std::optional<std::string>& pluginSetting) {
  module_ = SharedLibrary::open(modulePath, SharedLibrary::Binding::kUsual);
  auto entry = reinterpret_cast<hetcclNetModuleEntry>(
      module_.find(HETCCL_NET_MODULE_ENTRY));
  if (entry == nullptr)
    fail(ncclSystemError, "%s is not HetCCL's net module (no %s)",
         modulePath.c_str(), HETCCL_NET_MODULE_ENTRY);
  table_ = entry();
  if (table_ == nullptr || table_->abiVersion != HETCCL_NET_MODULE_ABI)
    fail(ncclSystemError,
         "%s has net-module ABI %u, this HetCCL needs %u: install the "
         "module built with this library",
         modulePath.c_str(), table_ ? table_->abiVersion : 0u,
         HETCCL_NET_MODULE_ABI);
  loadPlugin(pluginSetting);
  // Before v11 the plugin has one init, which this is; from v11 on this
  // context stays for good, like the plugin, and communicators get their
  // own.
  try {
    processContext_ = init(0);
    readDevices();
  } catch (...) {
    // A plugin that cannot serve is closed again, before the module goes
    // with this object.
    if (processContext_ != nullptr) table_->finalize(processContext_);
    table_->unload(plugin_);
    throw;
  }
}

void NetLibrary::loadPlugin(const std::optional<std::string>& pluginSetting) {
  std::string tried;
  EnvironmentGuard guard;
  for (const std::string& candidate : netPluginCandidates(pluginSetting)) {
    char why[512] = {};
    if (table_->load(candidate.c_str(), logPluginLine, &plugin_, why,
                     sizeof why) == 0) {
      pluginPath_ = candidate;
      break;
    }
    tried +=
        format("%s%s (%s)", tried.empty() ? "" : "; ", candidate.c_str(), why);
  }
  if (plugin_ == nullptr)
    fail(ncclSystemError, "cannot load the NCCL net plugin %s: tried %s",
         pluginSetting ? pluginSetting->c_str() : "(HETCCL_NET_PLUGIN unset)",
         tried.c_str());
  name_ = table_->name(plugin_);
  abiVersion_ = table_->version(plugin_);
  description_ = format("net plugin %s (ABI v%d, %s)", name_.c_str(),
                        abiVersion_, pluginPath_.c_str());
  restoreEnvironment(guard, description_, "its load");
}

hetcclNetContext* NetLibrary::init(uint64_t commId) const {
  EnvironmentGuard guard;
  hetcclNetContext* context = nullptr;
  // Traffic class -1: the plugin's default.
  const int result = table_->init(plugin_, commId, -1, &context);
  restoreEnvironment(guard, description_, "init");
  check(result, "init");
  return context;
}

void NetLibrary::readDevices() {
  int count = 0;
  check(table_->devices(plugin_, &count), "devices");
  if (count <= 0)
    fail(ncclSystemError,
         "%s reports no devices: it found no network it can use here",
         description_.c_str());
  for (int dev = 0; dev < count; ++dev) {
    hetcclNetDeviceInfo info{};
    check(table_->properties(plugin_, dev, &info), "getProperties");
    devices_.push_back(info);
    LOG_INFO(kLogNet,
             "%s: device %d %s (%s), %d Mbps, port %d, ptrSupport 0x%x, "
             "maxRecvs %d, maxP2pBytes %zu",
             description_.c_str(), dev, info.name,
             info.pciPath[0] ? info.pciPath : "virtual", info.speedMbps,
             info.port, info.ptrSupport, info.maxRecvs, info.maxP2pBytes);
  }
}

Error NetLibrary::failure(int result, const char* call) const {
  return Error(result == ncclRemoteError ? ncclRemoteError : ncclSystemError,
               format("%s: %s failed: %s (%d)", description_.c_str(), call,
                      resultName(result), result));
}

void NetLibrary::check(int result, const char* call) const {
  if (result != 0) throw failure(result, call);
}

namespace {

// Set once netLibrary() has loaded the plugin, for loadedNetLibrary().
std::atomic<const NetLibrary*> loadedLibrary{nullptr};

}  // namespace

const NetLibrary& netLibrary() {
  struct Outcome {
    const NetLibrary* library = nullptr;
    std::string failure;
  };
  // Never destroyed, like the library (net_library.h).
  static const Outcome* outcome = [] {
    auto* result = new Outcome;
    try {
      result->library = NetLibrary::load(
          modulePath(kNetModule, "libhetccl-net.so"), readString(kNetPlugin));
    } catch (const Error& e) {
      result->failure = e.what();
    }
    loadedLibrary.store(result->library);
    return result;
  }();
  if (outcome->library == nullptr)
    fail(ncclSystemError, "the net transport cannot be used: %s",
         outcome->failure.c_str());
  return *outcome->library;
}

const NetLibrary* netLibraryIfLoaded() { return loadedLibrary.load(); }

}  // namespace hetccl
