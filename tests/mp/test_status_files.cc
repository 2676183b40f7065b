// Status files (HETCCL_STATUS_DIR) and `hetccl-info --status`. Three CPU
// ranks in three domains over tcp; rank 1 stops (SIGSTOP) between two
// all-reduces, once its own file says it waits for nothing, and the others
// enter the second. While it is stopped, rank 0 runs
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
#include <iterator>
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

// The status file of `dir` whose name ends in `suffix`, or an empty path.
std::filesystem::path statusFile(const std::string& dir,
                                 const std::string& suffix) {
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.front() != '.' && name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      return entry.path();
  }
  return {};
}

// Sets the `time` line of the status file of `dir` ending in `suffix`
// back `seconds`; whether there was one.
bool ageStatusFile(const std::string& dir, const std::string& suffix,
                   double seconds) {
  const std::filesystem::path path = statusFile(dir, suffix);
  if (path.empty()) return false;
  std::ifstream in(path);
  std::string text;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("time ", 0) == 0)
      line = "time " + std::to_string(std::stod(line.substr(5)) - seconds);
    text += line + "\n";
  }
  in.close();
  std::ofstream(path, std::ios::trunc) << text;
  return true;
}

// The text of the status file of `dir` ending in `suffix` ("" if none).
std::string statusFileText(const std::string& dir, const std::string& suffix) {
  const std::filesystem::path path = statusFile(dir, suffix);
  if (path.empty()) return "";
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Rank 1 stops only once its file says it made call #1 and waits for
// nothing: the file is rewritten at most once a second, and one written
// while call #1 still ran would show a wait that no longer is.
void stopOnceIdleInTheFile(const std::string& dir) {
  for (double waited = 0; waited < 20; waited += 0.05) {
    const std::string text = statusFileText(dir, ".rank1");
    if (text.find("\nlatest 1\n") != std::string::npos &&
        text.find("\nwaiting ") == std::string::npos)
      break;
    sleepSeconds(0.05);
  }
  ::kill(::getpid(), SIGSTOP);  // goes on at rank 0's SIGCONT
}

// Waits until process `pid` is stopped (state T in /proc/PID/stat).
void awaitStopped(int pid) {
  for (double waited = 0; waited < 30; waited += 0.01) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), {});
    const size_t close = text.rfind(')');
    if (close != std::string::npos && close + 2 < text.size() &&
        text[close + 2] == 'T')
      return;
    sleepSeconds(0.01);
  }
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
  DomainLayout{{0, 1, 2}, 0, false, {{"HETCCL_TRANSPORT", "tcp"}}, {}}.applyTo(
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
          stopOnceIdleInTheFile(dir);
        } else if (ctx.rank() == 0) {
          waker = std::thread([&] {
            awaitStopped(std::stoi(pids[1]));
            sleepSeconds(kStoppedSeconds);
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
          stopOnceIdleInTheFile(dir);
        } else {
          waker = std::thread([&] {
            awaitStopped(std::stoi(pids[1]));
            sleepSeconds(kStoppedSeconds);
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
