#include "run/run_plan.h"

#include <tuple>

namespace hetccl_run {
namespace {

std::optional<Vendor> parseVendor(const std::string& text) {
  if (text == "cpu") return Vendor::kCpu;
  if (text == "cuda") return Vendor::kCuda;
  if (text == "hip") return Vendor::kHip;
  return std::nullopt;
}

// One line of `text` (a search's failure lists its places on indented
// lines after a colon): "looked in: a: why; b: why".
std::string oneLine(const std::string& text) {
  std::string line;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\n') {
      line += text[i];
      continue;
    }
    while (i + 1 < text.size() && text[i + 1] == ' ') ++i;
    line += line.empty() || line.back() == ':' ? " " : "; ";
  }
  return line;
}

}  // namespace

std::pair<Vendor, std::string> decideVendor(const RunRequest& request,
                                            const RunMachine& machine) {
  if (request.vendor) return {*request.vendor, "--vendor"};
  if (machine.cpuForced) return {Vendor::kCpu, "HETCCL_FORCE_CPU is set"};
  if (machine.nvidiaGpus > 0)
    return {Vendor::kCuda,
            std::to_string(machine.nvidiaGpus) + " NVIDIA GPU(s)"};
  if (machine.amdGpus > 0)
    return {Vendor::kHip, std::to_string(machine.amdGpus) + " AMD GPU(s)"};
  return {Vendor::kCpu, "no NVIDIA or AMD GPU found"};
}

const char* vendorName(Vendor vendor) {
  switch (vendor) {
    case Vendor::kCpu:
      return "cpu";
    case Vendor::kCuda:
      return "cuda";
    case Vendor::kHip:
      return "hip";
  }
  return "?";
}

const char* runUsage() {
  return "usage: hetccl-run [OPTIONS] [--] COMMAND [ARGS...]\n"
         "Runs COMMAND with HetCCL in place of NCCL or RCCL: preloads the\n"
         "drop-in for this rank's GPU vendor (libnccl.so.2 on NVIDIA and CPU\n"
         "nodes, librccl.so.1 on AMD ones) and names the vendor library "
         "HetCCL\n"
         "hands the rank's domain to. Put it after the launcher:\n"
         "  hetccl-run torchrun --nproc_per_node 8 train.py\n"
         "  srun hetccl-run python train.py\n"
         "  mpirun -np 16 hetccl-run ./app\n"
         "Options:\n"
         "  --domains SPEC        HETCCL_DOMAINS (e.g. split:2, 0,0,1,1, "
         "host)\n"
         "  --transport NAME      HETCCL_TRANSPORT (auto, shm, tcp, ucx, net)\n"
         "  --socket-ifname LIST  HETCCL_SOCKET_IFNAME (e.g. eth0, ^docker)\n"
         "  --vendor cpu|cuda|hip this rank's vendor, instead of finding it\n"
         "  --dry-run             print the environment it would set and exit\n"
         "  --verbose             say on stderr what it sets before it runs\n"
         "  -h, --help            this text\n";
}

ParsedArguments parseRunArguments(const std::vector<std::string>& arguments) {
  ParsedArguments parsed;
  RunRequest request;
  size_t i = 0;
  auto value = [&](const std::string& option) -> std::optional<std::string> {
    if (i + 1 >= arguments.size() || arguments[i + 1].empty()) {
      parsed.error = option + " needs a value";
      return std::nullopt;
    }
    return arguments[++i];
  };
  for (; i < arguments.size(); ++i) {
    const std::string& arg = arguments[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.empty() || arg[0] != '-') break;
    if (arg == "-h" || arg == "--help") {
      parsed.usage = true;
      return parsed;
    } else if (arg == "--dry-run") {
      request.dryRun = true;
    } else if (arg == "--verbose") {
      request.verbose = true;
    } else if (arg == "--domains") {
      if (!(request.domains = value(arg))) return parsed;
    } else if (arg == "--transport") {
      if (!(request.transport = value(arg))) return parsed;
    } else if (arg == "--socket-ifname") {
      if (!(request.socketIfname = value(arg))) return parsed;
    } else if (arg == "--vendor") {
      const std::optional<std::string> text = value(arg);
      if (!text) return parsed;
      if (!(request.vendor = parseVendor(*text))) {
        parsed.error = "--vendor " + *text + ": expected cpu, cuda or hip";
        return parsed;
      }
    } else {
      parsed.error = "unknown option " + arg;
      return parsed;
    }
  }
  request.command.assign(arguments.begin() + static_cast<long>(i),
                         arguments.end());
  if (request.command.empty() && !request.dryRun) {
    parsed.error = "no command to run";
    return parsed;
  }
  parsed.request = std::move(request);
  return parsed;
}

RunPlan planRun(const RunRequest& request, const RunMachine& machine) {
  RunPlan plan;
  std::tie(plan.vendor, plan.why) = decideVendor(request, machine);
  if (machine.dropinDirectory.empty()) {
    plan.error =
        "HetCCL's drop-in libraries were not found (set HETCCL_DROPIN_DIR to "
        "the folder of libnccl.so.2 and librccl.so.1)";
    return plan;
  }
  const std::string dropin =
      machine.dropinDirectory +
      (plan.vendor == Vendor::kHip ? "/librccl.so.1" : "/libnccl.so.2");
  std::string preload = dropin;
  if (machine.preload && !machine.preload->empty())
    preload += ":" + *machine.preload;
  plan.environment.emplace_back("LD_PRELOAD", preload);
  // Said, not set: the rank looks again itself, and there it prefers a
  // copy beside a framework it has loaded (a PyTorch wheel's), which this
  // launcher cannot see.
  if (plan.vendor != Vendor::kCpu) {
    const std::string vendor = plan.vendor == Vendor::kHip ? "RCCL" : "NCCL";
    if (!machine.vendorLibrary.empty())
      plan.notes.push_back(vendor + " found at " + machine.vendorLibrary +
                           " (a framework's own copy, where the rank has "
                           "one, comes first)");
    else
      plan.notes.push_back(
          vendor +
          " not found, so GPU domains of more than one rank will fail their "
          "init: " +
          oneLine(machine.vendorLibraryFailure));
  }
  if (request.domains)
    plan.environment.emplace_back("HETCCL_DOMAINS", *request.domains);
  if (request.transport)
    plan.environment.emplace_back("HETCCL_TRANSPORT", *request.transport);
  if (request.socketIfname)
    plan.environment.emplace_back("HETCCL_SOCKET_IFNAME",
                                  *request.socketIfname);
  return plan;
}

}  // namespace hetccl_run
