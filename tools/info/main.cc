// hetccl-info: what HetCCL finds on this machine: its version, the device
// runtimes and vendor libraries it could use, the transports, and the
// environment that shapes communicators.
#include <dlfcn.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "gpu_runtime_probe.h"
#include "nccl.h"
#include "util/env.h"
#include "util/socket.h"
#include "vendor/nccl/nccl_library.h"
#include "vendor/rccl/rccl_library.h"
#include "vendor/vendor_library_search.h"

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

// The directory of the HetCCL code this tool runs (the tool itself when it
// links HetCCL statically, libhetccl.so otherwise): where the build and
// the install put the device-runtime modules, or beside it.
std::vector<std::string> moduleDirectories() {
  Dl_info info{};
  std::vector<std::string> dirs;
  if (dladdr(reinterpret_cast<void*>(&ncclGetVersion), &info) == 0 ||
      info.dli_fname == nullptr)
    return dirs;
  std::string file = info.dli_fname;
  std::string dir = file.substr(0, file.rfind('/') + 1);
  // Beside libhetccl.so; lib/ for an installed tool in bin/; src/ for the
  // build tree's tools/.
  for (const std::string& candidate : {dir, dir + "../lib", dir + "../src"}) {
    char* real = realpath(candidate.empty() ? "." : candidate.c_str(), nullptr);
    if (real == nullptr) continue;  // no such directory
    hetccl::appendUnique(dirs, std::string(real) + "/");
    std::free(real);
  }
  return dirs;
}

void printModule(const char* runtime, const char* variable,
                 const char* fileName) {
  if (auto chosen = hetccl::envString(variable)) {
    std::printf("  %-6s %s (%s): %s\n", runtime, chosen->c_str(), variable,
                fileExists(*chosen) ? "found" : "missing!");
    return;
  }
  std::string looked;
  for (const std::string& dir : moduleDirectories()) {
    if (fileExists(dir + fileName)) {
      std::printf("  %-6s %s%s: found\n", runtime, dir.c_str(), fileName);
      return;
    }
    looked += (looked.empty() ? "" : ", ") + dir;
  }
  std::printf("  %-6s %s: not found (looked in %s)\n", runtime, fileName,
              looked.c_str());
}

void printRuntimes() {
  std::printf(
      "\nDevice runtimes (GPU buffers of heterogeneous communicators)\n");
  std::printf("  host   built in (CPU ranks, %ld cores)\n",
              sysconf(_SC_NPROCESSORS_ONLN));
  printModule("cuda", "HETCCL_CUDA_MODULE", "libhetccl-cuda.so");
  printModule("hip", "HETCCL_HIP_MODULE", "libhetccl-hip.so");
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

void printTransports() {
  std::printf("\nTransports\n");
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
}

void printEnvironment() {
  std::printf("\nEnvironment\n");
  const char* names[] = {"HETCCL_DEBUG",
                         "NCCL_DEBUG",
                         "HETCCL_COMM_ID",
                         "NCCL_COMM_ID",
                         "HETCCL_SOCKET_IFNAME",
                         "NCCL_SOCKET_IFNAME",
                         "HETCCL_DOMAINS",
                         "HETCCL_TIMEOUT",
                         "HETCCL_BOOTSTRAP_TIMEOUT",
                         "HETCCL_SHM_CHUNK",
                         "HETCCL_CHUNK",
                         "HETCCL_TRANSPORT",
                         "HETCCL_NCCL_LIBRARY",
                         "HETCCL_RCCL_LIBRARY",
                         "HETCCL_FORCE_CPU",
                         "HETCCL_CUDA_MODULE",
                         "HETCCL_HIP_MODULE",
                         "ROCM_PATH",
                         "CUDA_VISIBLE_DEVICES",
                         "HIP_VISIBLE_DEVICES",
                         "ROCR_VISIBLE_DEVICES"};
  bool any = false;
  for (const char* name : names) {
    if (const char* value = std::getenv(name)) {
      std::printf("  %s=%s\n", name, value);
      any = true;
    }
  }
  if (!any) std::printf("  (no HetCCL or NCCL variables set)\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) {
    std::printf("usage: %s\n  Prints what HetCCL finds on this machine.\n",
                argv[0]);
    return std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h" ? 0
                                                                            : 2;
  }
  printVersion();
  printRuntimes();
  printNvidia();
  printAmd();
  printTransports();
  printEnvironment();
  return 0;
}
