#include "runtime/device/device_module_loader.h"

#include <dlfcn.h>
#include <unistd.h>

#include <memory>
#include <mutex>

#include "util/env.h"
#include "util/error.h"
#include "util/log.h"

namespace hetccl {
namespace {

// The directory of the HetCCL library this code runs in: modules are
// installed beside it, whichever name (libnccl.so.2, libhetccl.so) it has.
std::string directoryOfThisLibrary() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&directoryOfThisLibrary), &info) == 0 ||
      info.dli_fname == nullptr)
    return "";
  std::string path = info.dli_fname;
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

std::string modulePath(const char* variable, const char* fileName) {
  if (auto chosen = envString(variable)) return *chosen;
  std::string beside = directoryOfThisLibrary() + fileName;
  if (access(beside.c_str(), R_OK) == 0) return beside;
  return fileName;  // the loader's search path
}

}  // namespace

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

DeviceModule& cudaModule() {
  // Loaded once per process and kept: GPU work may reference its code
  // until the process exits.
  static std::once_flag once;
  static std::unique_ptr<DeviceModule> module;
  static std::string failure;
  std::call_once(once, [] {
    std::string path = modulePath("HETCCL_CUDA_MODULE", "libhetccl-cuda.so");
    try {
      module = std::make_unique<DeviceModule>(path);
    } catch (const Error& e) {
      failure = e.what();
    }
  });
  if (!module)
    fail(ncclSystemError,
         "GPU buffers in a heterogeneous communicator need the CUDA runtime "
         "module: %s (build it with nvcc, or set HETCCL_CUDA_MODULE)",
         failure.c_str());
  return *module;
}

}  // namespace hetccl
