// What hetccl-run sets before it starts a rank's command: which drop-in of
// HetCCL the rank preloads (its GPU vendor's name of the collective
// library) and the options passed through as HetCCL's variables; and what
// it says: the vendor library HetCCL would hand the rank's domain to. Pure: the facts of the
// machine come in a RunMachine, so that every decision is testable.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hetccl_run {

// Which kind of rank the command will be, as the library decides it:
// HETCCL_FORCE_CPU makes every rank a CPU rank; else a rank on a machine
// with NVIDIA GPUs is a CUDA rank, with AMD GPUs a HIP rank (NVIDIA first,
// as the library asks CUDA first), without either a CPU rank.
enum class Vendor { kCpu, kCuda, kHip };

const char* vendorName(Vendor vendor);

struct RunRequest {
  std::optional<std::string> domains;       // --domains
  std::optional<std::string> transport;     // --transport
  std::optional<std::string> socketIfname;  // --socket-ifname
  std::optional<Vendor> vendor;             // --vendor: instead of finding it
  bool dryRun = false;                      // --dry-run
  bool verbose = false;                     // --verbose
  std::vector<std::string> command;
};

// Parses hetccl-run's arguments; nothing with `error` set (or `usage` for
// --help) when they are not a run.
struct ParsedArguments {
  std::optional<RunRequest> request;
  std::string error;
  bool usage = false;
};
ParsedArguments parseRunArguments(const std::vector<std::string>& arguments);
const char* runUsage();

struct RunMachine {
  bool cpuForced = false;  // HETCCL_FORCE_CPU set, not 0
  int nvidiaGpus = 0;
  int amdGpus = 0;
  // The folder of the drop-ins (libnccl.so.2, librccl.so.1); empty when
  // not found.
  std::string dropinDirectory;
  // The vendor library HetCCL would hand a domain of the rank's vendor to,
  // or why none was found.
  std::string vendorLibrary;
  std::string vendorLibraryFailure;
  std::optional<std::string> preload;  // LD_PRELOAD as it was
};

struct RunPlan {
  Vendor vendor = Vendor::kCpu;
  std::string why;  // how the vendor was decided
  std::vector<std::pair<std::string, std::string>> environment;
  std::vector<std::string> notes;  // what to tell the user (not fatal)
  std::string error;               // set: the command cannot be run so
};

// The rank's vendor and why: --vendor, else as the library decides it.
std::pair<Vendor, std::string> decideVendor(const RunRequest& request,
                                            const RunMachine& machine);

// What to set; the machine's vendor library must have been looked for
// already where the vendor is a GPU's.
RunPlan planRun(const RunRequest& request, const RunMachine& machine);

}  // namespace hetccl_run
