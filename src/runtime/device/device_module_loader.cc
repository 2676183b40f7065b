#include "runtime/device/device_module_loader.h"

#include <map>
#include <memory>
#include <mutex>

#include "runtime/gpu_runtimes.h"
#include "util/error.h"
#include "util/log.h"
#include "util/module_path.h"

namespace hetccl {

DeviceModule::DeviceModule(const hetcclDeviceModuleTable& table,
                           std::string name)
    : path_(std::move(name)), table_(&table) {}

DeviceModule::DeviceModule(const std::string& path)
    : library_(SharedLibrary::open(path)), path_(path) {
  auto entry = reinterpret_cast<hetcclDeviceModuleEntry>(
      library_.find(HETCCL_DEVICE_MODULE_ENTRY));
  if (entry == nullptr)
    fail(ncclSystemError, "%s is not a HetCCL device module (no %s)",
         path.c_str(), HETCCL_DEVICE_MODULE_ENTRY);
  table_ = entry();
  if (table_ == nullptr || table_->abiVersion != HETCCL_DEVICE_MODULE_ABI)
    fail(ncclSystemError,
         "%s has device-module ABI %u, this HetCCL needs %u: install the "
         "module built with this library",
         path.c_str(), table_ ? table_->abiVersion : 0u,
         HETCCL_DEVICE_MODULE_ABI);
  LOG_INFO(kLogInit, "loaded the %s runtime module %s", table_->runtimeName,
           path.c_str());
}

void DeviceModule::check(int code, const char* what) const {
  if (code == 0) return;
  fail(ncclUnhandledCudaError, "%s failed: %s error %d (%s)", what,
       table_->runtimeName, code, table_->errorString(code));
}

namespace {

// One module per runtime, loaded once per process and kept: GPU work may
// reference its code until the process exits.
class LoadedModule {
 public:
  LoadedModule(const ParamSpec& variable, const char* fileName,
               const char* runtimeName)
      : runtimeName_(runtimeName) {
    try {
      module_ = std::make_unique<DeviceModule>(modulePath(variable, fileName));
    } catch (const Error& e) {
      failure_ = e.what();
    }
  }

  DeviceModule& get() const {
    if (!module_)
      fail(ncclSystemError,
           "GPU buffers in a heterogeneous communicator need the %s runtime "
           "module: %s",
           runtimeName_, failure_.c_str());
    return *module_;
  }

 private:
  const char* runtimeName_;
  std::unique_ptr<DeviceModule> module_;
  std::string failure_;
};

}  // namespace

// Each runtime's module is loaded when a rank of it first needs it, never
// before: loading another vendor's would load that vendor's runtime.
DeviceModule& deviceModule(RuntimeKind runtime) {
  const GpuRuntime& row = gpuRuntime(runtime);
  static std::mutex mutex;
  static std::map<RuntimeKind, std::unique_ptr<LoadedModule>> modules;
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<LoadedModule>& module = modules[runtime];
  if (!module)
    module = std::make_unique<LoadedModule>(*row.moduleParam, row.moduleFile,
                                            row.label);
  return module->get();
}

}  // namespace hetccl
