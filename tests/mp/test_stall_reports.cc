// Stall reports (HETCCL_STALL_WARN). At init: a bootstrap root that waits
// for a late rank names it. In an operation: rank 1 stops (SIGSTOP) just after
// the others entered an all-reduce across domains. Within HETCCL_STALL_WARN +
// 2 s every other rank's log must hold a WARN line that names the
// operation and rank 1 with its domain, host and link; rank 0 then lets
// rank 1 go on (SIGCONT), and the all-reduce and the next one complete
// with the right result: a stall is reported, not turned into an error.
// In 2 domains over shm, tcp and ucx (CPU ranks), 3 domains over tcp,
// and emulated GPU ranks over tcp (the staged engine's proxy). The line
// says that the latest transfer from rank 1 belonged to the all-reduce
// before; the proxy's says its stage and pieces too.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "harness/check.h"
#include "harness/domains.h"
#include "harness/nccl_handles.h"
#include "harness/quick_collectives.h"
#include "harness/run_ranks.h"
#include "harness/test_params.h"

namespace hetccl::mp {
namespace {

constexpr int kStallWarnSeconds = 1;
// What the issue allows past HETCCL_STALL_WARN before the line shows.
constexpr double kReportSlackSeconds = 2;

void sleepSeconds(double seconds) {
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The stall line of this rank's log about rank 1, or "" if none.
std::string stallLineAboutRankOne(const std::string& log) {
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);)
    if (line.find("has waited") != std::string::npos &&
        line.find("for rank 1 (domain") != std::string::npos)
      return line;
  return "";
}

// The number after "op #" where `prefix` ends in `line`, or 0.
unsigned long long opNumberAfter(const std::string& line,
                                 const std::string& prefix) {
  const size_t at = line.find(prefix);
  if (at == std::string::npos) return 0;
  return std::strtoull(line.c_str() + at + prefix.size(), nullptr, 10);
}

class StoppedPeerTest : public ::testing::TestWithParam<StreamModeParam> {};

TEST_P(StoppedPeerTest, IsNamedInAStallLineThenCarriesOn) {
  const StreamModeParam& param = GetParam();
  if (param.domains.env.count("HETCCL_TRANSPORT") &&
      param.domains.env.at("HETCCL_TRANSPORT") == "ucx" && !ucxModuleBuilt())
    GTEST_SKIP() << "this build has no UCX module";
  char dirTemplate[] = "/tmp/hetccl-stall-XXXXXX";
  ASSERT_NE(::mkdtemp(dirTemplate), nullptr);
  const std::string dir = dirTemplate;
  RunOptions options;
  options.timeoutSeconds = 60;
  options.env = {{"HETCCL_STALL_WARN", std::to_string(kStallWarnSeconds)},
                 {"HETCCL_DEBUG", "WARN"},
                 {"HETCCL_DEBUG_FILE", dir + "/rank.%p.log"}};
  param.domains.applyTo(&options);
  const std::string transport = param.domains.env.count("HETCCL_TRANSPORT")
                                    ? param.domains.env.at("HETCCL_TRANSPORT")
                                    : "shm";
  runRanks(
      param.nranks,
      [&](RankContext& ctx) {
        ncclComm_t comm = ctx.initComm();
        checkDomainCount(comm, param.domains.count());
        HostStream stream;
        cudaStream_t onStream = param.onStream ? stream.get() : nullptr;
        checkAllReduceSum(comm, 1, ctx.nranks(), onStream, "before the stop");
        const std::vector<std::string> pids =
            ctx.exchange(std::to_string(::getpid()));
        const std::string log = dir + "/rank." + pids[ctx.rank()] + ".log";
        std::string lineInTime;
        std::thread waker;
        if (ctx.rank() == 1) {
          sleepSeconds(0.3);
          ::kill(::getpid(), SIGSTOP);  // goes on at rank 0's SIGCONT
        } else if (ctx.rank() == 0) {
          waker = std::thread([&] {
            sleepSeconds(0.3 + kStallWarnSeconds + kReportSlackSeconds);
            lineInTime = stallLineAboutRankOne(readFile(log));
            ::kill(std::stoi(pids[1]), SIGCONT);
          });
        }
        checkAllReduceSum(comm, 1, ctx.nranks(), onStream, "across the stop");
        if (waker.joinable()) waker.join();
        checkAllReduceSum(comm, 1, ctx.nranks(), onStream, "after the stop");
        if (ctx.rank() == 1) return;
        const std::string line =
            ctx.rank() == 0 ? lineInTime : stallLineAboutRankOne(readFile(log));
        std::printf("rank %d: %s\n", ctx.rank(), line.c_str());
        MP_CHECK(!line.empty())
            << "rank " << ctx.rank() << " logged no stall line about rank 1"
            << (ctx.rank() == 0 ? " within HETCCL_STALL_WARN + 2 s" : "")
            << "; its log:\n"
            << readFile(log);
        MP_CHECK(line.find("allReduce") != std::string::npos &&
                 line.find("host ") != std::string::npos &&
                 line.find("on its " + transport + " link") !=
                     std::string::npos)
            << "the stall line does not name the operation, the host and "
               "the link: "
            << line;
        // Rank 1 stopped before the all-reduce across the stop, so the
        // latest of its transfers that arrived belonged to the one before
        // (the same plan: a rank that waits for rank 1 in one received from
        // it in the other).
        const unsigned long long waited = opNumberAfter(line, ": op #");
        const std::string latest =
            "the latest transfer from rank 1 here belonged to op #";
        MP_CHECK(waited > 1 && opNumberAfter(line, latest) == waited - 1)
            << "the stall line does not say that the latest transfer from "
               "rank 1 belonged to the operation before: "
            << line;
        // Emulated GPU ranks: the staged engine's proxy waits on the
        // network for the stopped rank's piece.
        if (param.domains.emulatedGpus)
          MP_CHECK(line.find("the staged GPU engine's stage: network") !=
                       std::string::npos &&
                   (line.find("pieces received") != std::string::npos ||
                    line.find("pieces sent") != std::string::npos))
              << "the stall line does not say the staged engine's stage and "
                 "pieces: "
              << line;
      },
      options);
  (void)std::system(("rm -rf " + dir).c_str());
}

// Rank 2 starts its init late: once the root has waited HETCCL_STALL_WARN
// for the ranks, its process (rank 0's, which made the id) logs which ranks
// arrived, from where, and which have not; the communicator then forms.
TEST(StallReport, ABootstrapRootNamesTheRanksThatHaveNotArrived) {
  char dirTemplate[] = "/tmp/hetccl-stall-XXXXXX";
  ASSERT_NE(::mkdtemp(dirTemplate), nullptr);
  const std::string dir = dirTemplate;
  RunOptions options;
  options.timeoutSeconds = 60;
  options.env = {{"HETCCL_STALL_WARN", std::to_string(kStallWarnSeconds)},
                 {"HETCCL_DEBUG", "WARN"},
                 {"HETCCL_DEBUG_FILE", dir + "/rank.%p.log"}};
  runRanks(
      3,
      [&](RankContext& ctx) {
        if (ctx.rank() == 2)
          sleepSeconds(kStallWarnSeconds + kReportSlackSeconds);
        ncclComm_t comm = ctx.initComm();
        checkAllReduceSum(comm, 1, ctx.nranks(), nullptr, "after a late init");
        if (ctx.rank() != 0) return;
        const std::string log =
            readFile(dir + "/rank." + std::to_string(::getpid()) + ".log");
        MP_CHECK(log.find("has waited") != std::string::npos &&
                 log.find("rank(s) arrived (rank 0 at") != std::string::npos &&
                 log.find("not yet: rank(s) 2") != std::string::npos)
            << "the root named no missing rank 2; rank 0's log:\n"
            << log;
      },
      options);
  (void)std::system(("rm -rf " + dir).c_str());
}

// The same for a send and a receive: rank 0's grouped exchange with a
// stopped rank 1 is reported, then completes once rank 1 goes on.
TEST(StallReport, ASendAndReceiveWithAStoppedPeerIsReported) {
  char dirTemplate[] = "/tmp/hetccl-stall-XXXXXX";
  ASSERT_NE(::mkdtemp(dirTemplate), nullptr);
  const std::string dir = dirTemplate;
  RunOptions options;
  options.timeoutSeconds = 60;
  options.env = {{"HETCCL_STALL_WARN", std::to_string(kStallWarnSeconds)},
                 {"HETCCL_DEBUG", "WARN"},
                 {"HETCCL_DEBUG_FILE", dir + "/rank.%p.log"}};
  DomainLayout{{0, 1}, 0, false, {{"HETCCL_TRANSPORT", "tcp"}}}.applyTo(
      &options);
  runRanks(
      2,
      [&](RankContext& ctx) {
        ncclComm_t comm = ctx.initComm();
        const std::vector<std::string> pids =
            ctx.exchange(std::to_string(::getpid()));
        std::string lineInTime;
        std::thread waker;
        if (ctx.rank() == 1) {
          sleepSeconds(0.3);
          ::kill(::getpid(), SIGSTOP);
        } else {
          waker = std::thread([&] {
            sleepSeconds(0.3 + kStallWarnSeconds + kReportSlackSeconds);
            lineInTime = stallLineAboutRankOne(
                readFile(dir + "/rank." + pids[0] + ".log"));
            ::kill(std::stoi(pids[1]), SIGCONT);
          });
        }
        const int peer = 1 - ctx.rank();
        std::vector<int32_t> mine(1024, ctx.rank() + 1), theirs(1024, 0);
        MP_CHECK_NCCL(ncclGroupStart());
        MP_CHECK_NCCL(
            ncclSend(mine.data(), mine.size(), ncclInt32, peer, comm, nullptr));
        MP_CHECK_NCCL(ncclRecv(theirs.data(), theirs.size(), ncclInt32, peer,
                               comm, nullptr));
        MP_CHECK_NCCL(ncclGroupEnd());
        if (waker.joinable()) waker.join();
        MP_CHECK(theirs == std::vector<int32_t>(1024, peer + 1))
            << "rank " << ctx.rank() << " received wrong values";
        if (ctx.rank() == 1) return;
        MP_CHECK(lineInTime.find("a send or receive has waited") !=
                     std::string::npos &&
                 lineInTime.find("on its tcp link") != std::string::npos)
            << "rank 0 logged no stall line about its send/receive with rank "
               "1 within HETCCL_STALL_WARN + 2 s: '"
            << lineInTime << "'";
      },
      options);
  (void)std::system(("rm -rf " + dir).c_str());
}

// GPU ranks of one host on the stream-driven path, whose streams wait for
// each other's: the launch that waits for a stopped rank is said too.
TEST(StallReport, AStreamDrivenLaunchThatWaitsIsReported) {
  char dirTemplate[] = "/tmp/hetccl-stall-XXXXXX";
  ASSERT_NE(::mkdtemp(dirTemplate), nullptr);
  const std::string dir = dirTemplate;
  RunOptions options;
  options.timeoutSeconds = 60;
  options.env = {{"HETCCL_STALL_WARN", std::to_string(kStallWarnSeconds)},
                 {"HETCCL_DEBUG", "WARN"},
                 {"HETCCL_DEBUG_FILE", dir + "/rank.%p.log"}};
  emulatedGpuDomains({0, 1}).applyTo(&options);
  runRanks(
      2,
      [&](RankContext& ctx) {
        ncclComm_t comm = ctx.initComm();
        HostStream stream;
        checkAllReduceSum(comm, 1, 2, stream.get(), "before the stop");
        const std::vector<std::string> pids =
            ctx.exchange(std::to_string(::getpid()));
        std::string log;
        std::thread waker;
        if (ctx.rank() == 1) {
          sleepSeconds(0.3);
          ::kill(::getpid(), SIGSTOP);
        } else {
          waker = std::thread([&] {
            sleepSeconds(0.3 + kStallWarnSeconds + kReportSlackSeconds);
            log = readFile(dir + "/rank." + pids[0] + ".log");
            ::kill(std::stoi(pids[1]), SIGCONT);
          });
        }
        checkAllReduceSum(comm, 1, 2, stream.get(), "across the stop");
        if (waker.joinable()) waker.join();
        if (ctx.rank() == 1) return;
        MP_CHECK(log.find("on the stream-driven path") != std::string::npos &&
                 log.find("has waited") != std::string::npos)
            << "rank 0 said nothing of its waiting launch within "
               "HETCCL_STALL_WARN + 2 s; its log:\n"
            << log;
      },
      options);
  (void)std::system(("rm -rf " + dir).c_str());
}

INSTANTIATE_TEST_SUITE_P(
    Mp, StoppedPeerTest,
    ::testing::Values(
        StreamModeParam{2, false, domainsByLabel({0, 1})},
        StreamModeParam{
            2, false,
            DomainLayout{{0, 1}, 0, false, {{"HETCCL_TRANSPORT", "tcp"}}}},
        StreamModeParam{
            3, true,
            DomainLayout{{0, 1, 2}, 0, false, {{"HETCCL_TRANSPORT", "tcp"}}}},
        StreamModeParam{2, true, emulatedCapturesOverTcp({0, 1})},
        StreamModeParam{2, false, ucxBetweenPretendHosts({0, 1})}),
    [](const ::testing::TestParamInfo<StreamModeParam>& info) {
      return info.param.name();
    });

}  // namespace
}  // namespace hetccl::mp
