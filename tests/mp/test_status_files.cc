// Status files (HETCCL_STATUS_DIR) and `hetccl-info --status`. Three CPU
// ranks in three domains over tcp; rank 1 stops (SIGSTOP) just after the
// others entered an all-reduce. While it is stopped, rank 0 runs
// `hetccl-info --status DIR`, which must name rank 1 as the likely root of
// the stall and ranks 0 and 2 as waiting for it. Rank 0 then lets rank 1
// go on (SIGCONT): the all-reduce completes with the right result, and once
// the communicator is destroyed its status files are gone. Then the same
// with rank 1's file made old (its `time` line set back a minute, which
// the stopped process cannot undo): the summary must call it stale and
// still name rank 1 as the root, without the test waiting kStaleSeconds.
// The same in one domain of two CPU ranks (a stall watch, no call probe):
// rank 0 waits for rank 1 inside the domain's host collectives.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "harness/check.h"
#include "harness/domains.h"
#include "harness/files_and_commands.h"
#include "harness/nccl_handles.h"
#include "harness/quick_collectives.h"
#include "harness/run_ranks.h"

namespace hetccl::mp {
namespace {

// Long enough for the waits to show in the files, refreshed each second.
constexpr double kStoppedSeconds = 2.5;

bool hasLine(const std::string& text, const std::string& start,
             const std::string& part) {
  for (size_t at = text.find(start); at != std::string::npos;
       at = text.find(start, at + 1)) {
    const std::string line = text.substr(at, text.find('\n', at) - at);
    if (line.find(part) != std::string::npos) return true;
  }
  return false;
}

size_t filesIn(const std::string& dir) {
  size_t count = 0;
  for ([[maybe_unused]] const auto& entry :
       std::filesystem::directory_iterator(dir))
    ++count;
  return count;
}

// Sets the `time` line of the status file of `dir` ending in `suffix`
// back `seconds`; whether there was one.
bool ageStatusFile(const std::string& dir, const std::string& suffix,
                   double seconds) {
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.front() == '.' || name.size() <= suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    std::ifstream in(entry.path());
    std::string text;
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("time ", 0) == 0)
        line = "time " + std::to_string(std::stod(line.substr(5)) - seconds);
      text += line + "\n";
    }
    in.close();
    std::ofstream(entry.path(), std::ios::trunc) << text;
    return true;
  }
  return false;
}

void checkSummary(const std::string& summary, bool stale) {
  MP_CHECK(hasLine(summary, "  most likely at the root of the stall: rank 1 ",
                   "rank(s) 0, 2 wait for it"))
      << "the summary does not name rank 1 as the root:\n"
      << summary;
  if (stale) {
    MP_CHECK(hasLine(summary, "  most likely at the root of the stall: rank 1 ",
                     "its file is stale"))
        << "the summary does not say rank 1's file is stale:\n"
        << summary;
    MP_CHECK(hasLine(summary, "  rank 1 (host ", "STALE: not refreshed for"))
        << "the summary does not mark rank 1 STALE:\n"
        << summary;
  }
  for (const char* waiter : {"  rank 0 (host ", "  rank 2 (host "})
    MP_CHECK(hasLine(summary, waiter, "waits for rank 1 in call #"))
        << "the summary does not show " << waiter
        << "...) waiting for rank 1:\n"
        << summary;
}

void runWithRankOneStopped(bool stale) {
  char dirTemplate[] = "/tmp/hetccl-status-XXXXXX";
  ASSERT_NE(::mkdtemp(dirTemplate), nullptr);
  const std::string dir = dirTemplate;
  RunOptions options;
  options.timeoutSeconds = 60;
  options.env = {{"HETCCL_STATUS_DIR", dir}};
  DomainLayout{{0, 1, 2}, 0, false, {{"HETCCL_TRANSPORT", "tcp"}}}.applyTo(
      &options);
  runRanks(
      3,
      [&](RankContext& ctx) {
        Comm comm(ctx.initComm());
        checkDomainCount(comm.get(), 3);
        checkAllReduceSum(comm.get(), 1, 3, nullptr, "before the stop");
        const std::vector<std::string> pids =
            ctx.exchange(std::to_string(::getpid()));
        std::string summary;
        std::thread waker;
        if (ctx.rank() == 1) {
          sleepSeconds(0.3);
          ::kill(::getpid(), SIGSTOP);  // goes on at rank 0's SIGCONT
        } else if (ctx.rank() == 0) {
          waker = std::thread([&] {
            sleepSeconds(0.3 + kStoppedSeconds);
            if (stale)
              MP_CHECK(ageStatusFile(dir, ".rank1", 60))
                  << "rank 1 has no status file";
            summary =
                outputOf(std::string(HETCCL_INFO_PATH) + " --status " + dir);
            ::kill(std::stoi(pids[1]), SIGCONT);
          });
        }
        checkAllReduceSum(comm.get(), 1, 3, nullptr, "across the stop");
        if (waker.joinable()) waker.join();
        if (ctx.rank() == 0) {
          std::printf("hetccl-info --status %s:\n%s", dir.c_str(),
                      summary.c_str());
          checkSummary(summary, stale);
        }
        comm.destroy();
        ctx.barrier();
        if (ctx.rank() == 0)
          MP_CHECK(filesIn(dir) == 0)
              << "status files remain after the communicator was destroyed";
      },
      options);
  std::filesystem::remove_all(dir);
}

TEST(StatusFiles, NameTheStoppedRankAndGoAwayWithTheCommunicator) {
  runWithRankOneStopped(false);
}

TEST(StatusFiles, CallAStoppedRanksOldFileStaleAndNameItTheRoot) {
  runWithRankOneStopped(true);
}

TEST(StatusFiles, NameTheStoppedRankInsideOneDomain) {
  char dirTemplate[] = "/tmp/hetccl-status-XXXXXX";
  ASSERT_NE(::mkdtemp(dirTemplate), nullptr);
  const std::string dir = dirTemplate;
  RunOptions options;
  options.timeoutSeconds = 60;
  options.env = {{"HETCCL_STATUS_DIR", dir}};
  oneDomain().applyTo(&options);
  runRanks(
      2,
      [&](RankContext& ctx) {
        Comm comm(ctx.initComm());
        checkDomainCount(comm.get(), 1);
        checkAllReduceSum(comm.get(), 1, 2, nullptr, "before the stop");
        const std::vector<std::string> pids =
            ctx.exchange(std::to_string(::getpid()));
        std::string summary;
        std::thread waker;
        if (ctx.rank() == 1) {
          sleepSeconds(0.3);
          ::kill(::getpid(), SIGSTOP);  // goes on at rank 0's SIGCONT
        } else {
          waker = std::thread([&] {
            sleepSeconds(0.3 + kStoppedSeconds);
            summary =
                outputOf(std::string(HETCCL_INFO_PATH) + " --status " + dir);
            ::kill(std::stoi(pids[1]), SIGCONT);
          });
        }
        checkAllReduceSum(comm.get(), 1, 2, nullptr, "across the stop");
        if (waker.joinable()) waker.join();
        if (ctx.rank() == 0) {
          std::printf("hetccl-info --status %s:\n%s", dir.c_str(),
                      summary.c_str());
          MP_CHECK(hasLine(summary,
                           "  most likely at the root of the stall: rank 1 ",
                           "rank(s) 0 wait for it"))
              << "the summary does not name rank 1 as the root:\n"
              << summary;
          MP_CHECK(hasLine(summary, "  rank 0 (host ",
                           "waits for rank 1 in call #") &&
                   hasLine(summary, "  rank 0 (host ",
                           "inside domain 0's host collectives"))
              << "the summary does not show rank 0 waiting for rank 1 "
                 "inside the domain:\n"
              << summary;
        }
        comm.destroy();
        ctx.barrier();
        if (ctx.rank() == 0)
          MP_CHECK(filesIn(dir) == 0)
              << "status files remain after the communicator was destroyed";
      },
      options);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hetccl::mp
