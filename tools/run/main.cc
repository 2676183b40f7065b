// hetccl-run: starts a command with HetCCL in place of NCCL or RCCL
// (run_plan.h decides what to set; this file finds the machine's facts and
// runs the command). It replaces itself with the command (execvp), so that
// the launcher's signals and exit status reach the rank unchanged.
#include <limits.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "domain/nccl/nccl_library.h"
#include "domain/rccl/rccl_library.h"
#include "info/gpu_runtime_probe.h"
#include "run/run_plan.h"

namespace {

using hetccl_run::Vendor;

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

bool exists(const std::string& path) { return access(path.c_str(), R_OK) == 0; }

std::string executableDirectory() {
  char path[PATH_MAX] = {};
  const ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
  if (length <= 0) return "";
  std::string text(path, static_cast<size_t>(length));
  return text.substr(0, text.rfind('/'));
}

// HETCCL_DROPIN_DIR, else the installed layout beside this tool, else the
// build tree it was built in.
std::string findDropinDirectory() {
  std::vector<std::string> candidates;
  if (!environment("HETCCL_DROPIN_DIR").empty())
    candidates.push_back(environment("HETCCL_DROPIN_DIR"));
  candidates.push_back(executableDirectory() + "/" HETCCL_RUN_DROPIN_FROM_BIN);
  candidates.push_back(HETCCL_RUN_BUILD_DROPIN_DIR);
  for (const std::string& directory : candidates)
    if (exists(directory + "/libnccl.so.2")) return directory;
  return "";
}

// The GPUs of each vendor, asked only where it matters: never with
// HETCCL_FORCE_CPU (the GPU runtimes stay untouched), AMD only without
// NVIDIA GPUs.
void countGpus(hetccl_run::RunMachine& machine) {
  if (machine.cpuForced) return;
  machine.nvidiaGpus = hetccl_info::probeCudaDriver().deviceCount;
  if (machine.nvidiaGpus == 0)
    machine.amdGpus = hetccl_info::probeHipRuntime().deviceCount;
}

template <typename Library>
void findVendorLibrary(hetccl_run::RunMachine& machine) {
  try {
    machine.vendorLibrary = Library::load()->path();
  } catch (const std::exception& e) {
    machine.vendorLibraryFailure = e.what();
  }
}

hetccl_run::RunMachine readMachine(const hetccl_run::RunRequest& request) {
  hetccl_run::RunMachine machine;
  const std::string force = environment("HETCCL_FORCE_CPU");
  machine.cpuForced = !force.empty() && force != "0";
  if (!request.vendor) countGpus(machine);
  machine.dropinDirectory = findDropinDirectory();
  if (const char* preload = std::getenv("LD_PRELOAD"))
    machine.preload = preload;
  return machine;
}

void printPlan(const hetccl_run::RunPlan& plan,
               const std::vector<std::string>& command, FILE* out) {
  std::fprintf(out, "# hetccl-run: a %s rank (%s)\n",
               hetccl_run::vendorName(plan.vendor), plan.why.c_str());
  for (const std::string& note : plan.notes)
    std::fprintf(out, "# note: %s\n", note.c_str());
  for (const auto& [name, value] : plan.environment)
    std::fprintf(out, "%s=%s\n", name.c_str(), value.c_str());
  std::string line;
  for (const std::string& word : command)
    line += (line.empty() ? "" : " ") + word;
  if (!line.empty()) std::fprintf(out, "# then runs: %s\n", line.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const hetccl_run::ParsedArguments parsed = hetccl_run::parseRunArguments(
      std::vector<std::string>(argv + 1, argv + argc));
  if (parsed.usage) {
    std::fputs(hetccl_run::runUsage(), stdout);
    return 0;
  }
  if (!parsed.request) {
    std::fprintf(stderr, "hetccl-run: %s\n%s", parsed.error.c_str(),
                 hetccl_run::runUsage());
    return 2;
  }
  const hetccl_run::RunRequest& request = *parsed.request;
  hetccl_run::RunMachine machine = readMachine(request);
  // The vendor library is looked for only for a GPU rank, as HetCCL does.
  const Vendor vendor = hetccl_run::decideVendor(request, machine).first;
  if (vendor == Vendor::kHip)
    findVendorLibrary<hetccl::RcclLibrary>(machine);
  else if (vendor == Vendor::kCuda)
    findVendorLibrary<hetccl::NcclLibrary>(machine);
  const hetccl_run::RunPlan plan = hetccl_run::planRun(request, machine);
  if (!plan.error.empty()) {
    std::fprintf(stderr, "hetccl-run: %s\n", plan.error.c_str());
    return 2;
  }
  if (request.dryRun) {
    printPlan(plan, request.command, stdout);
    return 0;
  }
  if (request.verbose) printPlan(plan, request.command, stderr);
  for (const auto& [name, value] : plan.environment)
    setenv(name.c_str(), value.c_str(), 1);
  std::vector<char*> args;
  for (const std::string& word : request.command)
    args.push_back(const_cast<char*>(word.c_str()));
  args.push_back(nullptr);
  execvp(args[0], args.data());
  std::fprintf(stderr, "hetccl-run: cannot run %s: %s\n", args[0],
               std::strerror(errno));
  return 127;
}
