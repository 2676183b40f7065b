// hetccl-info: what HetCCL finds on this machine: its version, the device
// runtimes and vendor libraries it could use, the transports, and the
// environment that shapes communicators.
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "nccl.h"
#include "util/env.h"
#include "util/socket.h"
#include "vendor/nccl/nccl_library.h"

namespace {

bool fileExists(const std::string& path) {
  return access(path.c_str(), R_OK) == 0;
}

// Where a vendor library would be found by the dynamic loader's usual
// search, or by the variable that names it.
std::string findLibrary(const char* overrideVariable,
                        const std::vector<std::string>& names) {
  if (auto forced = hetccl::envString(overrideVariable))
    return fileExists(*forced) ? *forced : *forced + " (missing!)";
  const char* dirs[] = {"/usr/lib/x86_64-linux-gnu",
                        "/usr/lib64",
                        "/usr/lib",
                        "/usr/local/lib",
                        "/usr/local/cuda/lib64",
                        "/usr/local/cuda/lib",
                        "/opt/rocm/lib"};
  for (const char* dir : dirs)
    for (const std::string& name : names)
      if (fileExists(std::string(dir) + "/" + name))
        return std::string(dir) + "/" + name;
  return "not found";
}

void printVersion() {
  int version = 0;
  ncclGetVersion(&version);
  std::printf("HetCCL %d.%d.%d (NCCL API %d.%d.%d, version code %d)\n",
              HETCCL_MAJOR, HETCCL_MINOR, HETCCL_PATCH, version / 10000,
              version / 100 % 100, version % 100, version);
}

void printRuntimes() {
  std::printf("\nRuntimes\n");
  std::printf("  host   built in (CPU ranks, %ld cores)\n",
              sysconf(_SC_NPROCESSORS_ONLN));
  std::printf("  cuda   not available in this build\n");
  std::printf("  hip    not available in this build\n");
}

void printVendorLibraries() {
  std::printf("\nVendor libraries (used for GPU domains)\n");
  try {
    auto nccl = hetccl::NcclLibrary::load();
    std::printf("  NCCL   %d.%d.%d at %s\n", nccl->version() / 10000,
                nccl->version() / 100 % 100, nccl->version() % 100,
                nccl->path().c_str());
  } catch (const std::exception& e) {
    std::printf("  NCCL   not found: %s\n", e.what());
  }
  std::printf("  RCCL   %s\n",
              findLibrary("HETCCL_RCCL_LIBRARY", {"librccl.so.1"}).c_str());
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
  const char* names[] = {
      "HETCCL_DEBUG",        "NCCL_DEBUG",           "HETCCL_COMM_ID",
      "NCCL_COMM_ID",        "HETCCL_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME",
      "HETCCL_DOMAINS",      "HETCCL_TIMEOUT",       "HETCCL_BOOTSTRAP_TIMEOUT",
      "HETCCL_SHM_CHUNK",    "HETCCL_CHUNK",         "HETCCL_TRANSPORT",
      "HETCCL_NCCL_LIBRARY", "HETCCL_RCCL_LIBRARY"};
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
  printVendorLibraries();
  printTransports();
  printEnvironment();
  return 0;
}
