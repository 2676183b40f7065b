// hetccl-info: what HetCCL finds on this machine: its version, the device
// runtimes and vendor libraries it could use, the transports, and the
// environment that shapes communicators.
#include <dlfcn.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/all_params.h"
#include "domain/domain_backend.h"
#include "domain/nccl/nccl_library.h"
#include "domain/rccl/rccl_library.h"
#include "domain/vendor_library_search.h"
#include "gpu_runtime_probe.h"
#include "nccl.h"
#include "runtime/runtime_params.h"
#include "status_view.h"
#include "transport/net/net_devices.h"
#include "transport/net/net_library.h"
#include "transport/net/net_settings.h"
#include "transport/transport_registry.h"
#include "transport/ucx/ucx_library.h"
#include "transport/ucx/ucx_link.h"
#include "util/module_path.h"
#include "util/net_interfaces.h"
#include "util/params.h"

namespace {

bool fileExists(const std::string& path) {
  return access(path.c_str(), R_OK) == 0;
}

void printVersion() {
  int version = 0;
  ncclGetVersion(&version);
  std::printf("HetCCL %d.%d.%d (NCCL API %d.%d.%d, version code %d)\n",
              HETCCL_MAJOR, HETCCL_MINOR, HETCCL_PATCH, version / 10000,
              version / 100 % 100, version % 100, version);
}

// "2.28.3" from an NCCL-style version code (RCCL's too).
std::string ncclVersionText(int code) {
  return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) +
         "." + std::to_string(code % 100);
}

// A message of several lines, each continued under the first's text.
void printIndented(const char* label, const std::string& text) {
  std::string indented;
  for (char c : text) {
    indented += c;
    if (c == '\n') indented += "         ";
  }
  std::printf("  %-6s %s\n", label, indented.c_str());
}

void printModule(const char* runtime, const hetccl::ParamSpec& variable,
                 const char* fileName) {
  if (auto chosen = hetccl::readString(variable)) {
    std::printf("  %-6s %s (%s): %s\n", runtime, chosen->c_str(), variable.name,
                fileExists(*chosen) ? "found" : "missing!");
    return;
  }
  // The library's own search (util/module_path.h), shown as it looked.
  std::string looked;
  for (const std::string& candidate : hetccl::moduleCandidates(fileName)) {
    if (fileExists(candidate)) {
      std::printf("  %-6s %s: found\n", runtime, candidate.c_str());
      return;
    }
    looked += (looked.empty() ? "" : ", ") + candidate;
  }
  std::printf("  %-6s %s: not found (looked at %s)\n", runtime, fileName,
              looked.c_str());
}

void printRuntimes() {
  std::printf(
      "\nDevice runtimes (GPU buffers of heterogeneous communicators)\n");
  std::printf("  host   built in (CPU ranks, %ld cores)\n",
              sysconf(_SC_NPROCESSORS_ONLN));
  printModule("cuda", hetccl::kCudaModule, "libhetccl-cuda.so");
  printModule("hip", hetccl::kHipModule, "libhetccl-hip.so");
}

// "13.0, 2 devices" / "no device" from a probe that found its runtime.
std::string devicesText(const hetccl_info::GpuRuntimeProbe& probe,
                        const char* vendor) {
  if (probe.deviceCount > 0)
    return std::to_string(probe.deviceCount) + " " + vendor +
           (probe.deviceCount == 1 ? " device" : " devices");
  std::string text = std::string("no ") + vendor + " device";
  if (!probe.countErrorName.empty()) text += " (" + probe.countErrorName + ")";
  return text;
}

// "  NCCL   2.28.9 at PATH", or why the vendor's library did not load.
template <typename Library>
void printCollectiveLibrary(const char* name) {
  try {
    auto library = Library::load();
    std::printf("  %-6s %s at %s\n", name,
                ncclVersionText(library->version()).c_str(),
                library->path().c_str());
  } catch (const std::exception& e) {
    printIndented(name, e.what());
  }
}

void printNvidia() {
  std::printf("\nNVIDIA\n");
  hetccl_info::GpuRuntimeProbe cuda = hetccl_info::probeCudaDriver();
  if (cuda.library.empty())
    std::printf("  NVIDIA: no CUDA driver found (%s)\n", cuda.failure.c_str());
  else
    std::printf("  CUDA driver %d.%d found, %s\n", cuda.version / 1000,
                cuda.version % 1000 / 10, devicesText(cuda, "NVIDIA").c_str());
  printCollectiveLibrary<hetccl::NcclLibrary>("NCCL");
}

void printAmd() {
  std::printf("\nAMD\n");
  hetccl_info::GpuRuntimeProbe hip = hetccl_info::probeHipRuntime();
  if (hip.library.empty())
    std::printf("  AMD: no HIP runtime found (%s)\n", hip.failure.c_str());
  else
    std::printf("  HIP runtime %d.%d found (%s), %s\n", hip.version / 10000000,
                hip.version / 100000 % 100, hip.library.c_str(),
                devicesText(hip, "AMD").c_str());
  printCollectiveLibrary<hetccl::RcclLibrary>("RCCL");
}

// What a GPU rank's ucx links do with its buffers under HETCCL_UCX_GPU.
void printUcxGpuBuffers(const hetccl::UcxLibrary& ucx) {
  hetccl::UcxGpuPolicy policy{hetccl::GpuBuffers::kAuto, ucx.memoryKinds(),
                              ucx.hasRdma()};
  try {
    policy.mode = hetccl::UcxSettings::fromEnvironment().gpu;
  } catch (const std::exception& e) {
    std::printf("         GPU buffers: %s\n", e.what());
    return;
  }
  std::string line;
  for (auto kind : {hetccl::kCudaMemory, hetccl::kHipMemory}) {
    std::string what;
    try {
      what = hetccl::takesGpuMemory(policy, kind)
                 ? "handed to UCX as they are"
                 : "staged through host memory";
    } catch (const std::exception&) {
      what = "fail the init (UCX lists no such memory)";
    }
    line += (line.empty() ? "" : "; ") + hetccl::describeMemoryKinds(kind) +
            " buffers " + what;
  }
  std::printf("         GPU buffers (HETCCL_UCX_GPU): %s\n", line.c_str());
}

// UCX as the ucx transport sees it: version, transports, memory types.
void printUcx() {
  try {
    const hetccl::UcxLibrary& ucx = hetccl::ucxLibrary();
    std::printf("  ucx    UCX %s (%s): %s\n", ucx.version().c_str(),
                ucx.modulePath().c_str(), ucx.transports().c_str());
    std::printf("         memory %s; RDMA %s\n",
                hetccl::describeMemoryKinds(ucx.memoryKinds()).c_str(),
                ucx.hasRdma() ? "yes" : "no (tcp is preferred between hosts)");
    printUcxGpuBuffers(ucx);
  } catch (const std::exception& e) {
    std::printf("  ucx    not available: %s\n", e.what());
  }
}

// Whether `auto` takes the plugin between hosts, and what a GPU rank's net
// links do with its buffers under HETCCL_NET_GPU (on every device).
void printNetChoices(const hetccl::NetLibrary& net) {
  int pointerSupport = ~0;
  bool fabric = false;
  for (const hetcclNetDeviceInfo& d : net.devices()) {
    pointerSupport &= d.ptrSupport;
    fabric = fabric || !hetccl::isPlainSocket(d);
  }
  std::printf("         between hosts under HETCCL_TRANSPORT=auto: %s\n",
              fabric ? "chosen (a device that is not a plain socket)"
                     : "left to tcp (its devices are plain sockets)");
  std::string what;
  try {
    // Whether this machine's GPU exports DMA-BUF is for a rank to find out
    // (hetccl-info makes no GPU current): plain GPU pointers only here.
    const hetccl::NetGpuPolicy policy{
        hetccl::NetSettings::fromEnvironment().gpu, pointerSupport, false,
        net.description()};
    what = hetccl::netTakesGpuMemory(policy, hetccl::kCudaMemory)
               ? "handed to the plugin as they are"
           : pointerSupport & HETCCL_NET_MODULE_PTR_DMABUF
               ? "handed over through DMA-BUF where the GPU exports it, "
                 "else staged"
               : "staged through host memory";
  } catch (const std::exception& e) {
    what = e.what();
  }
  std::printf("         GPU buffers (HETCCL_NET_GPU): %s\n", what.c_str());
}

// The NCCL net plugin the net transport would load (HETCCL_NET_PLUGIN, or
// libnccl-net.so where the loader finds one): its name, ABI version and
// devices.
void printNet() {
  const std::optional<std::string> setting =
      hetccl::readString(hetccl::kNetPlugin);
  try {
    const hetccl::NetLibrary& net = hetccl::netLibrary();
    std::printf("  net    %s: %zu device(s)\n", net.description().c_str(),
                net.devices().size());
    for (size_t dev = 0; dev < net.devices().size(); ++dev) {
      const hetcclNetDeviceInfo& d = net.devices()[dev];
      std::printf(
          "         device %zu %s: %d Mbps, ptrSupport %s, maxComms %d, "
          "maxRecvs %d, port %d, %s\n",
          dev, d.name, d.speedMbps,
          hetccl::describePointerSupport(d.ptrSupport).c_str(), d.maxComms,
          d.maxRecvs, d.port, d.pciPath[0] ? d.pciPath : "virtual");
    }
    printNetChoices(net);
  } catch (const std::exception& e) {
    if (setting)
      std::printf("  net    not available: %s\n", e.what());
    else
      std::printf(
          "  net    no plugin (HETCCL_NET_PLUGIN unset, and no "
          "libnccl-net.so on the loader's path)\n");
  }
}

// The registered transports, what each can do here, and which one the
// current HETCCL_TRANSPORT picks within a host and between hosts.
void printTransports() {
  std::printf("\nTransports (registered: %s)\n",
              hetccl::registeredTransportNames().c_str());
  for (const hetccl::Transport* transport : hetccl::registeredTransports())
    std::printf("  %-6s %s; %s\n", transport->name(), transport->description(),
                transport->reachesOtherHosts() ? "any host" : "one host");
  struct statvfs shm {};
  if (statvfs("/dev/shm", &shm) == 0)
    std::printf("  shm    /dev/shm, %.1f GiB free\n",
                static_cast<double>(shm.f_bavail) * shm.f_frsize / (1 << 30));
  else
    std::printf("  shm    /dev/shm not available\n");
  try {
    std::printf("  tcp    bootstrap listens on %s\n",
                hetccl::chooseLocalAddress().hostString().c_str());
    for (const auto& itf : hetccl::selectInterfaces())
      std::printf("         interface %s %s\n", itf.name.c_str(),
                  itf.address.hostString().c_str());
  } catch (const std::exception& e) {
    std::printf("  tcp    no usable interface: %s\n", e.what());
  }
  printUcx();
  printNet();
  try {
    auto selection = hetccl::TransportSelection::parse(
        hetccl::readString(hetccl::kTransport).value_or(""));
    // Between hosts: what this machine would choose facing a peer that
    // wants the same.
    std::string betweenHosts;
    try {
      auto mine = selection.preferencesBetweenHosts();
      betweenHosts = selection.betweenHosts(mine, mine).name();
    } catch (const std::exception& e) {
      betweenHosts = std::string("none (") + e.what() + ")";
    }
    std::printf("  chosen: %s within a host, %s between hosts like this one\n",
                selection.onOneHost().name(), betweenHosts.c_str());
  } catch (const std::exception& e) {
    std::printf("  chosen: none: %s\n", e.what());
  }
  std::printf("\nDomain back-ends\n");
  for (const hetccl::DomainBackend* backend :
       hetccl::registeredDomainBackends())
    std::printf("  %-5s ranks: %s\n",
                hetccl::runtimeKindName(backend->runtime()), backend->name());
}

// The setting of each parameter, or its default, and whether HetCCL
// accepts it (a communicator's init fails on one it does not).
void printParameters() {
  std::printf("\nParameters (HETCCL_* wins over NCCL_*; empty means unset)\n");
  for (const hetccl::ParamSpec* param : hetccl::allParams()) {
    const hetccl::ParamSpec& spec = *param;
    auto setting = hetccl::paramSetting(spec);
    if (!setting) {
      std::printf("  %-30s %s (default)\n", spec.name, spec.defaultText);
      continue;
    }
    std::string status = std::string("set by ") + setting->variable;
    try {
      hetccl::checkParamText(spec, setting->text, setting->variable);
    } catch (const std::exception& e) {
      status = std::string("invalid: ") + e.what();
    }
    std::printf("  %-30s %s (%s)\n", spec.name, setting->text.c_str(),
                status.c_str());
  }
  std::printf("\nOther environment\n");
  bool any = false;
  for (const char* name : {"CUDA_HOME", "ROCM_PATH", "CUDA_VISIBLE_DEVICES",
                           "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"}) {
    if (auto value = hetccl::environmentValue(name)) {
      std::printf("  %s=%s\n", name, value->c_str());
      any = true;
    }
  }
  if (!any)
    std::printf("  (none of CUDA_HOME, ROCM_PATH, *_VISIBLE_DEVICES)\n");
}

// A table cell: `|` would end it.
std::string markdownCell(const std::string& text) {
  std::string cell;
  for (char c : text) cell += c == '|' ? std::string("\\|") : std::string(1, c);
  return cell;
}

// What the ranks of a communicator need of each other's values.
const char* scopeCell(hetccl::ParamScope scope) {
  switch (scope) {
    case hetccl::ParamScope::Local:
      return "own";
    case hetccl::ParamScope::Same:
      return "**must agree**";
    case hetccl::ParamScope::Rank0:
      return "rank 0's";
  }
  return "";
}

// The table of parameters in docs/configuration.md
// (scripts/update-params-table.sh puts it there; a test checks that it is
// current).
void printMarkdown() {
  std::printf("| variable | default | accepted | ranks | meaning |\n");
  std::printf("| --- | --- | --- | --- | --- |\n");
  for (const hetccl::ParamSpec* param : hetccl::allParams()) {
    const hetccl::ParamSpec& spec = *param;
    std::string names = std::string("`") + spec.name + "`";
    if (spec.ncclAlias != nullptr)
      names += std::string(" / `") + spec.ncclAlias + "`";
    // A String's default says what unset means; the others' are values.
    std::string defaultCell = spec.type == hetccl::ParamType::String
                                  ? markdownCell(spec.defaultText)
                                  : std::string("`") + spec.defaultText + "`";
    std::printf("| %s | %s | %s | %s | %s |\n", names.c_str(),
                defaultCell.c_str(),
                markdownCell(hetccl::describeAccepted(spec)).c_str(),
                scopeCell(spec.scope), markdownCell(spec.doc).c_str());
  }
}

// Every status file under `dir` (HETCCL_STATUS_DIR), summed up. The
// temporary files the ranks rename into place start with a dot.
int printStatus(const std::string& dir) {
  std::error_code error;
  std::vector<hetccl::info::RankStatus> ranks;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    if (entry.path().filename().string().front() == '.') continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    if (auto status = hetccl::info::parseStatus(text.str()))
      ranks.push_back(*status);
  }
  if (error) {
    std::fprintf(stderr, "%s: %s\n", dir.c_str(), error.message().c_str());
    return 1;
  }
  const double now = std::chrono::duration<double>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  std::printf("%s", hetccl::info::summarizeStatus(ranks, now).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string option = argc > 1 ? argv[1] : "";
  if (option == "--markdown" && argc == 2) {
    printMarkdown();
    return 0;
  }
  if (option == "--status" && argc == 3) return printStatus(argv[2]);
  if (argc > 1) {
    std::printf(
        "usage: %s [--markdown | --status DIR]\n  Prints what HetCCL finds on "
        "this machine; --markdown prints the table of its environment "
        "parameters; --status sums up the status files of HETCCL_STATUS_DIR "
        "(each rank's latest call, whom it waits for, the likely root of a "
        "stall).\n",
        argv[0]);
    return option == "--help" || option == "-h" ? 0 : 2;
  }
  printVersion();
  printRuntimes();
  printNvidia();
  printAmd();
  printTransports();
  printParameters();
  return 0;
}
