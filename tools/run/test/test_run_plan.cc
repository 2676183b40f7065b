// hetccl-run's arguments and decisions (run/run_plan.h): which vendor a
// rank is, which drop-in it preloads, what it passes on, and what it says
// when something is missing.
#include "run/run_plan.h"

#include <gtest/gtest.h>

namespace hetccl_run {
namespace {

RunRequest parsed(const std::vector<std::string>& arguments) {
  const ParsedArguments result = parseRunArguments(arguments);
  EXPECT_TRUE(result.request) << result.error;
  return result.request.value_or(RunRequest{});
}

std::string errorOf(const std::vector<std::string>& arguments) {
  const ParsedArguments result = parseRunArguments(arguments);
  EXPECT_FALSE(result.request);
  return result.error;
}

RunMachine machine(int nvidia = 0, int amd = 0) {
  RunMachine m;
  m.nvidiaGpus = nvidia;
  m.amdGpus = amd;
  m.dropinDirectory = "/usr/lib/x86_64-linux-gnu/hetccl";
  return m;
}

std::string value(const RunPlan& plan, const std::string& name) {
  for (const auto& [variable, text] : plan.environment)
    if (variable == name) return text;
  return "(unset)";
}

TEST(RunArguments, OptionsThenTheCommandWithItsOwnOptions) {
  const RunRequest r = parsed({"--domains", "split:2", "--transport", "tcp",
                               "torchrun", "--nproc_per_node", "8", "t.py"});
  EXPECT_EQ(r.domains.value_or(""), "split:2");
  EXPECT_EQ(r.transport.value_or(""), "tcp");
  EXPECT_EQ(r.command, (std::vector<std::string>{"torchrun", "--nproc_per_node",
                                                 "8", "t.py"}));
  // After "--" everything is the command, options included.
  EXPECT_EQ(parsed({"--", "--dry-run"}).command,
            std::vector<std::string>{"--dry-run"});
}

TEST(RunArguments, MistakesAreNamed) {
  EXPECT_EQ(errorOf({"--vendor", "sparc", "app"}),
            "--vendor sparc: expected cpu, cuda or hip");
  EXPECT_EQ(errorOf({"--domains"}), "--domains needs a value");
  EXPECT_EQ(errorOf({"--colour", "app"}), "unknown option --colour");
  EXPECT_EQ(errorOf({}), "no command to run");
  EXPECT_TRUE(parseRunArguments({"--help"}).usage);
}

TEST(RunPlan, TheVendorIsDecidedAsTheLibraryDecidesIt) {
  EXPECT_EQ(planRun(parsed({"app"}), machine(2, 0)).vendor, Vendor::kCuda);
  EXPECT_EQ(planRun(parsed({"app"}), machine(0, 4)).vendor, Vendor::kHip);
  // CUDA is asked first, as the library asks.
  EXPECT_EQ(planRun(parsed({"app"}), machine(1, 1)).vendor, Vendor::kCuda);
  EXPECT_EQ(planRun(parsed({"app"}), machine()).vendor, Vendor::kCpu);
  RunMachine forced = machine(8, 0);
  forced.cpuForced = true;
  const RunPlan plan = planRun(parsed({"app"}), forced);
  EXPECT_EQ(plan.vendor, Vendor::kCpu);
  EXPECT_EQ(plan.why, "HETCCL_FORCE_CPU is set");
  EXPECT_EQ(planRun(parsed({"--vendor", "hip", "app"}), machine(8, 0)).vendor,
            Vendor::kHip);
}

TEST(RunPlan, EachVendorPreloadsItsDropinAheadOfWhatWasPreloaded) {
  RunMachine m = machine(0, 1);
  m.preload = "/opt/profiler.so";
  EXPECT_EQ(value(planRun(parsed({"app"}), m), "LD_PRELOAD"),
            "/usr/lib/x86_64-linux-gnu/hetccl/librccl.so.1:/opt/profiler.so");
  EXPECT_EQ(value(planRun(parsed({"app"}), machine()), "LD_PRELOAD"),
            "/usr/lib/x86_64-linux-gnu/hetccl/libnccl.so.2");
}

TEST(RunPlan, TheVendorLibraryIsNamedOrItsAbsenceSaid) {
  RunMachine found = machine(1, 0);
  found.vendorLibrary = "/venv/nvidia/nccl/lib/libnccl.so.2";
  const RunPlan plan = planRun(parsed({"app"}), found);
  // Said, not set: the rank's own search may find a framework's copy.
  EXPECT_EQ(value(plan, "HETCCL_NCCL_LIBRARY"), "(unset)");
  ASSERT_EQ(plan.notes.size(), 1u);
  EXPECT_NE(plan.notes[0].find("NCCL found at " + found.vendorLibrary),
            std::string::npos);
  RunMachine missing = machine(0, 1);
  missing.vendorLibraryFailure = "no RCCL found; looked in:\n  librccl.so.1";
  const RunPlan without = planRun(parsed({"app"}), missing);
  EXPECT_EQ(value(without, "HETCCL_RCCL_LIBRARY"), "(unset)");
  ASSERT_EQ(without.notes.size(), 1u);
  EXPECT_EQ(without.notes[0].find('\n'), std::string::npos) << without.notes[0];
  EXPECT_NE(without.notes[0].find("RCCL not found"), std::string::npos);
  // A CPU rank needs none.
  EXPECT_EQ(value(planRun(parsed({"app"}), machine()), "HETCCL_NCCL_LIBRARY"),
            "(unset)");
}

TEST(RunPlan, OptionsBecomeHetcclVariables) {
  const RunPlan plan =
      planRun(parsed({"--domains", "0,0,1,1", "--transport", "ucx",
                      "--socket-ifname", "^docker", "app"}),
              machine());
  EXPECT_EQ(value(plan, "HETCCL_DOMAINS"), "0,0,1,1");
  EXPECT_EQ(value(plan, "HETCCL_TRANSPORT"), "ucx");
  EXPECT_EQ(value(plan, "HETCCL_SOCKET_IFNAME"), "^docker");
  EXPECT_EQ(value(planRun(parsed({"app"}), machine()), "HETCCL_TRANSPORT"),
            "(unset)");
}

TEST(RunPlan, WithoutTheDropinsItCannotRun) {
  RunMachine m = machine();
  m.dropinDirectory.clear();
  EXPECT_NE(planRun(parsed({"app"}), m).error.find("HETCCL_DROPIN_DIR"),
            std::string::npos);
}

}  // namespace
}  // namespace hetccl_run
