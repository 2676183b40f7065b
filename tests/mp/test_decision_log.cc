// The decision log (HETCCL_DEBUG=INFO, HETCCL_DEBUG_SUBSYS=TUNING): the
// first all-reduce of each size class a communicator runs logs one line
// naming the plan it took and the setting that decided it; running it
// again, or a size of the same class, logs nothing more. On CPU ranks
// across two domains (one-shot and pipelined plans), on emulated GPU ranks
// of one host (the stream-driven low-latency kernel and pipelined
// outboxes; a reduction by a scalar in device memory, handed to the staged
// engine) and on emulated GPU ranks over tcp (the staged engine's plans).
// Each rank reads its own log (HETCCL_DEBUG_FILE with %p).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "harness/check.h"
#include "harness/domains.h"
#include "harness/files_and_commands.h"
#include "harness/nccl_handles.h"
#include "harness/run_ranks.h"

namespace hetccl::mp {
namespace {

constexpr double kSettleSeconds = 30;

// An all-reduce of `count` floats and what its line must say: `size` as
// the line spells it, then each of `says`.
struct Probe {
  size_t count;
  std::string size;
  std::vector<std::string> says;
};

struct DecisionCase {
  std::string name;
  DomainLayout domains;
  std::map<std::string, std::string> env;
  std::vector<Probe> probes;
};

void PrintTo(const DecisionCase& c, std::ostream* out) { *out << c.name; }

// The lines of `log` that hold `needle`.
std::vector<std::string> linesWith(const std::string& log,
                                   const std::string& needle) {
  std::vector<std::string> found;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);)
    if (line.find(needle) != std::string::npos) found.push_back(line);
  return found;
}

// A fresh directory for the ranks' logs (each rank its own file, at INFO
// for TUNING), removed when the test ends.
class LogDirectory {
 public:
  LogDirectory() {
    char path[] = "/tmp/hetccl-decisions-XXXXXX";
    if (::mkdtemp(path) != nullptr) path_ = path;
  }
  ~LogDirectory() {
    if (!path_.empty()) (void)std::system(("rm -rf " + path_).c_str());
  }
  bool made() const { return !path_.empty(); }
  RunOptions options() const {
    RunOptions options;
    options.env = {{"HETCCL_DEBUG", "INFO"},
                   {"HETCCL_DEBUG_SUBSYS", "TUNING"},
                   {"HETCCL_DEBUG_FILE", path_ + "/rank.%p.log"}};
    return options;
  }
  // The calling rank's log.
  std::string ownLog() const {
    return readFile(path_ + "/rank." + std::to_string(::getpid()) + ".log");
  }

 private:
  std::string path_;
};

// A sum of ones, checked at a few places: the subject is the log.
void allReduceOnes(ncclComm_t comm, cudaStream_t stream, size_t count,
                   int nranks, ncclRedOp_t op = ncclSum) {
  std::vector<float> send(count, 1.0f), recv(count, 0.0f);
  MP_CHECK_NCCL(settle(ncclAllReduce(send.data(), recv.data(), count,
                                     ncclFloat32, op, comm, stream),
                       comm, kSettleSeconds));
  MP_CHECK_NCCL(hetcclStreamSynchronize(stream));
  for (size_t i : {size_t{0}, count / 2, count - 1})
    MP_CHECK(recv[i] == static_cast<float>(nranks))
        << "element " << i << " of " << count << " is " << recv[i];
}

void checkProbe(const std::string& log, int rank, const Probe& probe) {
  const std::string head = "rank " + std::to_string(rank) + ": allReduce of " +
                           probe.size + " (float32): ";
  const std::vector<std::string> lines = linesWith(log, head);
  MP_CHECK(lines.size() == 1) << lines.size() << " lines hold \"" << head
                              << "\", expected 1; the log:\n"
                              << log;
  if (lines.size() != 1) return;
  std::printf("%s\n", lines[0].c_str());
  for (const std::string& part : probe.says)
    MP_CHECK(lines[0].find(part) != std::string::npos)
        << "the line does not say \"" << part << "\": " << lines[0];
}

class DecisionLogTest : public ::testing::TestWithParam<DecisionCase> {};

TEST_P(DecisionLogTest, FirstOpOfEachSizeClassSaysWhatWasChosenAndWhy) {
  const DecisionCase& param = GetParam();
  const LogDirectory logs;
  ASSERT_TRUE(logs.made());
  RunOptions options = logs.options();
  options.timeoutSeconds = 120;
  param.domains.applyTo(&options);
  for (const auto& [name, value] : param.env) options.env[name] = value;
  runRanks(
      2,
      [&](RankContext& ctx) {
        ncclComm_t comm = ctx.initComm();
        checkDomainCount(comm, param.domains.count());
        HostStream stream;
        // Twice each, then one element less: the same size class.
        for (const Probe& probe : param.probes)
          for (size_t count : {probe.count, probe.count, probe.count - 1})
            allReduceOnes(comm, stream.get(), count, ctx.nranks());
        MP_CHECK_NCCL(ncclCommFinalize(comm));
        MP_CHECK_NCCL(ncclCommDestroy(comm));
        const std::string log = logs.ownLog();
        for (const Probe& probe : param.probes)
          checkProbe(log, ctx.rank(), probe);
        MP_CHECK(linesWith(log, ": allReduce of ").size() ==
                 param.probes.size())
            << "expected one line per size class; the log:\n"
            << log;
      },
      options);
}

// A reduction by a scalar in device memory is not the outboxes' to run:
// the stream-driven path says it hands the op to the staged engine, which
// says which plan it takes.
TEST(DecisionLog, StreamDrivenPathSaysWhatItHandsToTheStagedEngine) {
  const LogDirectory logs;
  ASSERT_TRUE(logs.made());
  RunOptions options = logs.options();
  emulatedGpuDomains({0, 1}).applyTo(&options);
  runRanks(
      2,
      [&](RankContext& ctx) {
        ncclComm_t comm = ctx.initComm();
        HostStream stream;
        // An emulated GPU's memory is host memory.
        static float one = 1.0f;
        ncclRedOp_t premulSum;
        MP_CHECK_NCCL(ncclRedOpCreatePreMulSum(&premulSum, &one, ncclFloat32,
                                               ncclScalarDevice, comm));
        for (int i = 0; i < 2; ++i)
          allReduceOnes(comm, stream.get(), 1024, ctx.nranks(), premulSum);
        MP_CHECK_NCCL(ncclRedOpDestroy(premulSum, comm));
        MP_CHECK_NCCL(ncclCommFinalize(comm));
        MP_CHECK_NCCL(ncclCommDestroy(comm));
        const std::string log = logs.ownLog();
        const std::vector<std::string> lines = linesWith(
            log, "rank " + std::to_string(ctx.rank()) + ": allReduce of 4K");
        MP_CHECK(lines.size() == 2) << "expected the hand-over and the plan; "
                                    << "the log:\n"
                                    << log;
        if (lines.size() != 2) return;
        for (const std::string& line : lines) std::printf("%s\n", line.c_str());
        MP_CHECK(lines[0].find("staged engine: a reduction by a scalar in "
                               "device memory") != std::string::npos)
            << lines[0];
        MP_CHECK(lines[1].find("one-shot plan: buffer of 4K bytes <= ") !=
                     std::string::npos &&
                 lines[1].find("(cost model)") != std::string::npos)
            << lines[1];
      },
      options);
}

DomainLayout stagedOverTcp() {
  DomainLayout layout = emulatedGpuDomains({0, 1});
  layout.env = {{"HETCCL_TRANSPORT", "tcp"}};
  return layout;
}

// Rank 0 a GPU rank, rank 1 a CPU rank, each its own pretend host.
DomainLayout cpuAndGpuRanksOverTcp() {
  DomainLayout layout;
  layout.emulatedGpuRanks = {0};
  layout.env = {{"HETCCL_TRANSPORT", "tcp"}, {"HETCCL_HOSTID", "A,B"}};
  return layout;
}

// The ranks of `layout` (two where it names none), with `env` set, create
// a communicator and destroy it: rank 0's log has one line with `marker` that
// says each of `says` where `says` is not empty; otherwise no rank's log has
// one.
void expectOneInitLine(const DomainLayout& layout,
                       const std::map<std::string, std::string>& env,
                       const std::string& marker,
                       const std::vector<std::string>& says) {
  const LogDirectory logs;
  ASSERT_TRUE(logs.made());
  RunOptions options = logs.options();
  layout.applyTo(&options);
  for (const auto& [name, value] : env) options.env[name] = value;
  const int nranks =
      layout.labels.empty() ? 2 : static_cast<int>(layout.labels.size());
  runRanks(
      nranks,
      [&](RankContext& ctx) {
        ncclComm_t comm = ctx.initComm();
        MP_CHECK_NCCL(ncclCommDestroy(comm));
        const std::string log = logs.ownLog();
        const std::vector<std::string> lines = linesWith(log, marker);
        const size_t expected = ctx.rank() == 0 && !says.empty() ? 1 : 0;
        MP_CHECK(lines.size() == expected)
            << lines.size() << " lines with \"" << marker << "\", expected "
            << expected << "; the log:\n"
            << log;
        if (lines.size() != 1) return;
        std::printf("%s\n", lines[0].c_str());
        for (const std::string& part : says)
          MP_CHECK(lines[0].find(part) != std::string::npos)
              << "the line does not say \"" << part << "\": " << lines[0];
      },
      options);
}

// Rank 0 logs, once per communicator, the link the cost model saw and the
// cut-off and chunks it chose: measured at init, or as HETCCL_LINK_COST
// declares it; with both HETCCL_ONE_SHOT_MAX and HETCCL_CHUNK set there is
// nothing to choose, so nothing is measured or logged.
TEST(DecisionLog, TheCostModelSaysWhatItSawAndChose) {
  const struct {
    std::map<std::string, std::string> env;
    std::vector<std::string> says;  // empty: no line at all
  } cases[] = {
      {{},
       {"(measured), CPU ranks reduce at ", "all-reduce: one-shot up to ",
        "; all-gather: one-shot up to ",
        "; reduce-scatter: ", "; broadcast: ", "then chunks of "}},
      {{{"HETCCL_LINK_COST", "20,12.5"}},
       {"link between domains 20.0 us, 12.50 GB/s, 0.0 us per further "
        "transfer (HETCCL_LINK_COST)"}},
      {{{"HETCCL_LINK_COST", "20,12.5,3"}},
       {"link between domains 20.0 us, 12.50 GB/s, 3.0 us per further "
        "transfer (HETCCL_LINK_COST)"}},
      {{{"HETCCL_ENGINE_STEP", "37.5"}},
       {"(measured), CPU ranks reduce at ",
        ", the engine's step 37.5 us (HETCCL_ENGINE_STEP); all-reduce: "}},
      {{{"HETCCL_ONE_SHOT_MAX", "32K"}, {"HETCCL_CHUNK", "16M"}}, {}},
  };
  for (const auto& c : cases)
    expectOneInitLine(domainsByLabel({0, 1}), c.env,
                      ": cost model: link between domains ", c.says);
}

// Where the link was measured, every rank's engine times its own hop
// across at init (the staged GPU engine, the host engine of CPU ranks,
// both in one communicator of CPU and GPU ranks), and rank 0 logs the
// step fitted to it with the plans chosen again; a declared link keeps
// the model's constant step, a declared step stands as it is.
TEST(DecisionLog, TheEngineSaysTheStepItMeasured) {
  const std::vector<std::string> says = {
      " us (measured at init: a one-element all-reduce across the domains "
      "took ",
      "all-reduce: one-shot up to "};
  const char* const kStepLine =
      ": cost model: the engine's step across domains ";
  expectOneInitLine(stagedOverTcp(), {}, kStepLine, says);
  expectOneInitLine(stagedOverTcp(), {{"HETCCL_LINK_COST", "20,12.5"}},
                    kStepLine, {});
  expectOneInitLine(domainsByLabel({0, 1}), {}, kStepLine, says);
  expectOneInitLine(domainsByLabel({0, 1}), {{"HETCCL_ENGINE_STEP", "20"}},
                    kStepLine, {});
  expectOneInitLine(cpuAndGpuRanksOverTcp(), {}, kStepLine, says);
}

// Where the link was measured, CPU ranks time their domain's host
// collectives at init, and the model prices each domain's library as its
// slowest rank found it: rank 0 logs each against the default it
// replaces. A domain of one rank has nothing to time; a declared link
// keeps the defaults.
TEST(DecisionLog, TheHostCollectivesAreTimedAtInit) {
  const std::vector<std::string> says = {
      "'s library timed at init: ", " us per collective, ",
      " GB/s bus bandwidth (instead of 5.0 us, 10.00 GB/s)"};
  for (int d : {0, 1})
    expectOneInitLine(domainsByLabel({0, 0, 1, 1}), {},
                      ": cost model: domain " + std::to_string(d) +
                          "'s library timed at init",
                      says);
  const char* const kAnyDomain = "'s library timed at init";
  expectOneInitLine(domainsByLabel({0, 1}), {}, kAnyDomain, {});
  expectOneInitLine(domainsByLabel({0, 0, 1, 1}),
                    {{"HETCCL_LINK_COST", "20,12.5"}}, kAnyDomain, {});
}

INSTANTIATE_TEST_SUITE_P(
    Mp, DecisionLogTest,
    ::testing::Values(
        DecisionCase{"CpuRanks",
                     domainsByLabel({0, 1}),
                     {{"HETCCL_CHUNK", "64K"}, {"HETCCL_ONE_SHOT_MAX", "32K"}},
                     {{1024,
                       "4K bytes",
                       {"one-shot plan: buffer of 4K bytes <= "
                        "HETCCL_ONE_SHOT_MAX=32K",
                        "links: 1 shm"}},
                      {65536,
                       "256K bytes",
                       {"pipelined plan: buffer of 256K bytes > "
                        "HETCCL_ONE_SHOT_MAX=32K; 4 chunk(s) of up to 64K "
                        "bytes (HETCCL_CHUNK=64K)",
                        "links: 1 shm"}}}},
        DecisionCase{"EmulatedGpuStreamDriven",
                     emulatedGpuDomains({0, 1}),
                     {},
                     {{1024,
                       "4K bytes",
                       {"low-latency kernel: larger buffer of 4K bytes <= "
                        "HETCCL_GPU_LL_MAX=64K"}},
                      {1 << 20,
                       "4M bytes",
                       {"pipelined outboxes: larger buffer of 4M bytes > "
                        "HETCCL_GPU_LL_MAX=64K; 4 step(s) of up to 1M bytes "
                        "(HETCCL_GPU_CHUNK=4M"}}}},
        DecisionCase{"EmulatedGpuStagedOverTcp",
                     stagedOverTcp(),
                     {{"HETCCL_CHUNK", "64K"}, {"HETCCL_ONE_SHOT_MAX", "32K"}},
                     {{1024,
                       "4K bytes",
                       {"one-shot plan: buffer of 4K bytes <= "
                        "HETCCL_ONE_SHOT_MAX=32K",
                        "1 tcp",
                        "GPU buffers staged through pinned host "
                        "memory in pieces of up to 16K bytes, 1 pair of "
                        "staging streams"}},
                      {65536,
                       "256K bytes",
                       {"pipelined plan: buffer of 256K bytes > "
                        "HETCCL_ONE_SHOT_MAX=32K; 4 chunk(s)",
                        "1 tcp", "GPU buffers staged"}}}},
        // Nothing set: the cost model chooses the cut-off, from a
        // declared link so that the sizes fall on known sides; CPU ranks
        // keep HETCCL_CHUNK.
        DecisionCase{
            "CpuRanksCostModel",
            domainsByLabel({0, 1}),
            {{"HETCCL_LINK_COST", "20,10"}},
            {{1024,
              "4K bytes",
              {"one-shot plan: buffer of 4K bytes <= ", " (cost model)"}},
             {1 << 22,
              "16M bytes",
              {"pipelined plan: buffer of 16M bytes > ", " (cost model); ",
               "(HETCCL_CHUNK=16M)"}}}}),
    [](const ::testing::TestParamInfo<DecisionCase>& info) {
      return info.param.name;
    });

}  // namespace
}  // namespace hetccl::mp
