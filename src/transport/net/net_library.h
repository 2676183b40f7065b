// The net module (libhetccl-net.so) and the NCCL network plugin it loaded.
// Loaded at the first communicator that uses the net transport and kept
// until the process exits: a plugin's threads and the logger it holds
// outlive any orderly teardown, so neither is ever unloaded.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "transport/net/net_module.h"
#include "util/error.h"
#include "util/shared_library.h"

namespace hetccl {

class NetLibrary {
 public:
  // Loads the module at `modulePath` and the plugin `pluginSetting` names
  // (HETCCL_NET_PLUGIN's value; net_plugin_name.h), inits it once and
  // reads its devices. What the plugin changes in the environment while it
  // loads and inits is put back (and logged). Throws ncclSystemError naming
  // the plugin and what failed: the load, init, or no devices. Never
  // destroyed (see above): the caller keeps the object for good.
  static const NetLibrary* load(
      const std::string& modulePath,
      const std::optional<std::string>& pluginSetting);

  const hetcclNetModuleTable& table() const { return *table_; }
  hetcclNetPlugin* plugin() const { return plugin_; }
  const std::string& pluginPath() const { return pluginPath_; }
  // The plugin's own name, and the ABI version taken (8 .. 12).
  const std::string& name() const { return name_; }
  int abiVersion() const { return abiVersion_; }
  const std::vector<hetcclNetDeviceInfo>& devices() const { return devices_; }
  // "net plugin hetccl-test (ABI v12, /path/libnccl-net-hetccl-test.so)".
  const std::string& description() const { return description_; }

  // A context for one communicator; throws like check(). The environment
  // is guarded as at load.
  hetcclNetContext* init(uint64_t commId) const;
  // The error for the plugin's `result` of `call`: ncclRemoteError where
  // the plugin said so, else ncclSystemError, naming the plugin and call.
  Error failure(int result, const char* call) const;
  // Throws failure() unless `result` is 0.
  void check(int result, const char* call) const;

  NetLibrary(const NetLibrary&) = delete;
  NetLibrary& operator=(const NetLibrary&) = delete;

 private:
  NetLibrary(const std::string& modulePath,
             const std::optional<std::string>& pluginSetting);
  void loadPlugin(const std::optional<std::string>& pluginSetting);
  void readDevices();

  SharedLibrary module_;
  const hetcclNetModuleTable* table_ = nullptr;
  hetcclNetPlugin* plugin_ = nullptr;
  // The plugin's one init before v11; from v11 a context kept for good.
  hetcclNetContext* processContext_ = nullptr;
  std::string pluginPath_;
  std::string name_;
  int abiVersion_ = 0;
  std::vector<hetcclNetDeviceInfo> devices_;
  std::string description_;
};

// The process's plugin, from HETCCL_NET_MODULE and HETCCL_NET_PLUGIN, loaded
// at the first call. Throws ncclSystemError saying why the net transport
// cannot be used; the first failure is kept and thrown again.
const NetLibrary& netLibrary();
// The process's plugin if netLibrary() loaded it, else null; never loads.
const NetLibrary* netLibraryIfLoaded();

}  // namespace hetccl
