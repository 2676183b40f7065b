#include "transport/ucx/ucx_library.h"

#include <memory>
#include <set>
#include <vector>

#include "transport/transport.h"
#include "transport/ucx/ucx_settings.h"
#include "util/comma_list.h"
#include "util/error.h"
#include "util/log.h"
#include "util/module_path.h"
#include "util/net_interfaces.h"

namespace hetccl {
namespace {

// "tcp/eth0, posix/memory" as {"tcp/eth0", "posix/memory"}.
std::vector<std::string> transportResources(const std::string& transports) {
  std::vector<std::string> resources;
  for (std::string resource : splitCommaList(transports)) {
    resource.erase(0, resource.find_first_not_of(' '));
    if (!resource.empty()) resources.push_back(resource);
  }
  return resources;
}

unsigned memoryKindsOf(unsigned ucxMemoryTypes) {
  unsigned kinds = 0;
  if (ucxMemoryTypes & HETCCL_UCX_MEMORY_HOST) kinds |= kHostMemory;
  if (ucxMemoryTypes & HETCCL_UCX_MEMORY_CUDA) kinds |= kCudaMemory;
  if (ucxMemoryTypes & HETCCL_UCX_MEMORY_ROCM) kinds |= kHipMemory;
  return kinds;
}

// UCX_NET_DEVICES for the context when HETCCL_SOCKET_IFNAME (or
// NCCL_SOCKET_IFNAME) chooses interfaces and the user did not set
// UCX_NET_DEVICES: those interfaces plus every RDMA device, so that naming
// the Ethernet interface for the bootstrap does not hide InfiniBand from
// UCX. Empty: leave UCX's own (the user's UCX_NET_DEVICES, else all
// devices).
std::string netDevicesFor(const std::string& transports) {
  if (!interfaceFilter() || environmentValue("UCX_NET_DEVICES")) return "";
  std::set<std::string> seen;
  std::string devices;
  auto add = [&](const std::string& device) {
    if (seen.insert(device).second)
      devices += (devices.empty() ? "" : ",") + device;
  };
  for (const NetInterface& interface : selectInterfaces()) add(interface.name);
  for (const std::string& resource : transportResources(transports)) {
    size_t slash = resource.find('/');
    if (slash != std::string::npos &&
        listsRdmaTransport(resource.substr(0, slash)))
      add(resource.substr(slash + 1));
  }
  return devices;
}

}  // namespace

bool listsRdmaTransport(const std::string& transports) {
  for (const std::string& resource : transportResources(transports)) {
    const std::string name = resource.substr(0, resource.find('/'));
    for (const char* rdma : {"rc", "dc", "ud"})
      if (name == rdma || name.rfind(std::string(rdma) + "_", 0) == 0)
        return true;
  }
  return false;
}

UcxLibrary::UcxLibrary()
    : path_(hetccl::modulePath(kUcxModule, "libhetccl-ucx.so")) {
  library_ = SharedLibrary::open(path_, SharedLibrary::Binding::kUsual);
  auto entry = reinterpret_cast<hetcclUcxModuleEntry>(
      library_.find(HETCCL_UCX_MODULE_ENTRY));
  if (entry == nullptr)
    fail(ncclSystemError, "%s is not HetCCL's UCX module (no %s)",
         path_.c_str(), HETCCL_UCX_MODULE_ENTRY);
  table_ = entry();
  if (table_ == nullptr || table_->abiVersion != HETCCL_UCX_MODULE_ABI)
    fail(ncclSystemError,
         "%s has UCX-module ABI %u, this HetCCL needs %u: install the "
         "module built with this library",
         path_.c_str(), table_ ? table_->abiVersion : 0u,
         HETCCL_UCX_MODULE_ABI);
  unsigned major = 0, minor = 0, release = 0;
  table_->version(&major, &minor, &release);
  version_ = format("%u.%u.%u", major, minor, release);
  char names[4096] = {};
  check(table_->listTransports(names, sizeof names), "listing UCX transports");
  transports_ = names;
  hasRdma_ = listsRdmaTransport(transports_);
  const std::string netDevices = netDevicesFor(transports_);
  check(table_->contextCreate(netDevices.empty() ? nullptr : netDevices.c_str(),
                              &context_),
        "creating a UCX context");
  memoryKinds_ = memoryKindsOf(table_->contextMemoryTypes(context_));
  LOG_INFO(kLogNet,
           "UCX %s from %s: transports %s; memory %s; UCX_NET_DEVICES %s",
           version_.c_str(), path_.c_str(), transports_.c_str(),
           describeMemoryKinds(memoryKinds_).c_str(),
           netDevices.empty() ? "as UCX reads it" : netDevices.c_str());
}

void UcxLibrary::check(int status, const char* what) const {
  if (status == 0) return;
  fail(ncclSystemError, "%s failed: UCX error %d (%s)", what, status,
       table_->statusString(status));
}

const UcxLibrary& ucxLibrary() {
  struct Outcome {
    UcxLibrary* library = nullptr;
    std::string failure;
  };
  // Never destroyed: UCX's threads and memory hooks outlive any orderly
  // teardown, and a context cleaned up at exit races with them.
  static const Outcome* outcome = [] {
    auto* result = new Outcome;
    try {
      result->library = new UcxLibrary();
    } catch (const Error& e) {
      result->failure = e.what();
    }
    return result;
  }();
  if (outcome->library == nullptr)
    fail(ncclSystemError, "UCX is not available: %s", outcome->failure.c_str());
  return *outcome->library;
}

}  // namespace hetccl
