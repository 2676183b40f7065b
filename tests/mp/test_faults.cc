// Failures end in errors within bounded time, never in hangs: aborting a
// communicator with work in flight, a peer killed mid-collective, a rank
// that never arrives at init, a rank of ncclCommInitAll whose thread cannot
// start, and strangers talking to the bootstrap port.
#include <arpa/inet.h>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "harness/check.h"
#include "harness/domains.h"
#include "harness/files_and_commands.h"
#include "harness/nccl_handles.h"
#include "harness/quick_collectives.h"
#include "harness/run_ranks.h"
#include "harness/test_params.h"
#include "hetccl.h"

namespace hetccl::mp {
namespace {

// Set in a rank's process: it kills itself the moment it has created a
// shared-memory segment (the shm_open below), in the middle of init.
bool killAfterCreatingASegment = false;
// Likewise, but only once every rank has created its segment (they meet in
// a barrier of the run's side channel), so that none dies while another
// still waits for it.
RankContext* killOnceAllCreatedASegment = nullptr;

// Set on a thread: how many more threads it may create before its
// pthread_create fails as at a thread limit (EAGAIN); -1: no limit.
thread_local int threadsBeforeFailure = -1;

}  // namespace
}  // namespace hetccl::mp

// Every std::thread starts here (as shm_open below): the real one, unless
// the calling thread has used up the threads it was allowed.
extern "C" int pthread_create(pthread_t* thread, const pthread_attr_t* attr,
                              void* (*start)(void*), void* arg) {
  using Create =
      int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  static const auto real =
      reinterpret_cast<Create>(dlsym(RTLD_NEXT, "pthread_create"));
  int& allowed = hetccl::mp::threadsBeforeFailure;
  if (allowed == 0) return EAGAIN;
  if (allowed > 0) --allowed;
  return real(thread, attr, start, arg);
}

// HetCCL's calls to shm_open come here (this executable's definition comes
// first in the dynamic linker's lookup): the real one, and then the kill,
// if this process asked for it. A rank killed at an exact point of init,
// however loaded the machine is.
extern "C" int shm_open(const char* name, int flags, mode_t mode) {
  using ShmOpen = int (*)(const char*, int, mode_t);
  static const auto real =
      reinterpret_cast<ShmOpen>(dlsym(RTLD_NEXT, "shm_open"));
  const int fd = real(name, flags, mode);
  if (fd >= 0 && (flags & O_CREAT) && hetccl::mp::killOnceAllCreatedASegment) {
    hetccl::mp::killOnceAllCreatedASegment->barrier();
    ::raise(SIGKILL);
  }
  if (fd >= 0 && (flags & O_CREAT) && hetccl::mp::killAfterCreatingASegment)
    ::raise(SIGKILL);
  return fd;
}

namespace hetccl::mp {
namespace {

constexpr double kAbortLimitSeconds = 5;
// HETCCL_TIMEOUT for the killed-peer tests, and the slack allowed on top.
constexpr int kPeerTimeoutSeconds = 10;
constexpr double kDetectionSlackSeconds = 8;

RunOptions withEnv(std::map<std::string, std::string> env, int timeout) {
  RunOptions options;
  options.env = std::move(env);
  options.timeoutSeconds = timeout;
  return options;
}

// Rank 1 joins the communicator but never calls the collective that rank 0
// waits in; it keeps its communicator until rank 0 is done, so that only
// the abort can free rank 0.
void idlePeer(RankContext& ctx, ncclComm_t comm) {
  ctx.barrier();
  MP_CHECK_NCCL(ncclCommAbort(comm));
}

TEST(Faults, AbortWithWorkQueuedOnHostStream) {
  RunOptions options = withEnv({{"HETCCL_TIMEOUT", "120"}}, 60);
  runRanks(
      2,
      [](RankContext& ctx) {
        ncclComm_t comm = ctx.initComm();
        if (ctx.rank() == 1) return idlePeer(ctx, comm);
        HostStream stream;
        std::vector<float> data(1000, 1.0f);
        MP_CHECK_NCCL(ncclAllReduce(data.data(), data.data(), data.size(),
                                    ncclFloat32, ncclSum, comm, stream.get()));
        sleepSeconds(0.5);
        double start = nowSeconds();
        ncclResult_t aborted = ncclCommAbort(comm);
        double abortSeconds = nowSeconds() - start;
        MP_CHECK(abortSeconds < kAbortLimitSeconds)
            << "ncclCommAbort took " << abortSeconds << " s";
        MP_CHECK_NCCL(aborted) << "ncclCommAbort";
        start = nowSeconds();
        ncclResult_t synced = hetcclStreamSynchronize(stream.get());
        double syncSeconds = nowSeconds() - start;
        MP_CHECK(synced != ncclSuccess)
            << "the aborted all-reduce's stream synchronized without an error";
        MP_CHECK(syncSeconds < kAbortLimitSeconds)
            << "hetcclStreamSynchronize took " << syncSeconds
            << " s after abort";
        ctx.barrier();
      },
      options);
}

// The caller is blocked inside a NULL-stream all-reduce; another thread
// aborts the communicator, which must free the blocked call with an error.
TEST(Faults, AbortFromAnotherThreadWhileBlocked) {
  RunOptions options = withEnv({{"HETCCL_TIMEOUT", "120"}}, 60);
  runRanks(
      2,
      [](RankContext& ctx) {
        ncclComm_t comm = ctx.initComm();
        if (ctx.rank() == 1) return idlePeer(ctx, comm);
        std::atomic<double> abortSeconds{-1};
        std::atomic<int> abortResult{-1};
        std::thread aborter([&] {
          sleepSeconds(0.5);
          double start = nowSeconds();
          abortResult = ncclCommAbort(comm);
          abortSeconds = nowSeconds() - start;
        });
        std::vector<float> data(1000, 1.0f);
        double start = nowSeconds();
        ncclResult_t result =
            ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat32,
                          ncclSum, comm, nullptr);
        double blockedSeconds = nowSeconds() - start;
        aborter.join();
        MP_CHECK(result != ncclSuccess)
            << "the all-reduce succeeded although its peer never joined";
        MP_CHECK(blockedSeconds < 0.5 + kAbortLimitSeconds)
            << "the blocked all-reduce returned after " << blockedSeconds
            << " s";
        MP_CHECK(abortSeconds >= 0 && abortSeconds < kAbortLimitSeconds)
            << "ncclCommAbort took " << abortSeconds << " s";
        MP_CHECK(abortResult == ncclSuccess)
            << "ncclCommAbort returned "
            << describeResult(static_cast<ncclResult_t>(abortResult.load()));
        ctx.barrier();
      },
      options);
}

// The second all-reduce's error, from the call, the stream or the
// communicator's async error; fails the rank if all report success.
ncclResult_t secondAllReduceError(ncclComm_t comm, bool onStream) {
  HostStream stream;
  std::vector<double> data(4096, 1.0);
  ncclResult_t result =
      ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat64, ncclSum,
                    comm, onStream ? stream.get() : nullptr);
  if (result == ncclSuccess && onStream) {
    result = hetcclStreamSynchronize(stream.get());
  }
  if (result == ncclSuccess) {
    ncclResult_t asyncError = ncclSuccess;
    MP_CHECK_NCCL(ncclCommGetAsyncError(comm, &asyncError));
    result = asyncError;
  }
  return result;
}

// The second all-reduce with rank 1 gone or silent (`how`) fails with
// ncclRemoteError within `limitSeconds` and a message, and the abort after
// it returns promptly. On a stream, the error comes from the stream or
// from the communicator's async error while the stream waits (a GPU
// rank's stream stays blocked until the abort releases it, and what it
// holds then is undefined, as with NCCL; a CPU rank's stream fails).
void expectErrorThenAbort(ncclComm_t comm, bool onStream, bool gpuRank,
                          double limitSeconds, const char* how) {
  HostStream stream;
  std::vector<double> data(4096, 1.0);
  double start = nowSeconds();
  ncclResult_t result =
      ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat64, ncclSum,
                    comm, onStream ? stream.get() : nullptr);
  while (result == ncclSuccess && nowSeconds() - start < limitSeconds) {
    ncclResult_t query = onStream ? hetcclStreamQuery(stream.get()) : result;
    if (query != ncclInProgress) {
      result = onStream ? hetcclStreamSynchronize(stream.get()) : query;
      if (result == ncclSuccess) break;
    }
    if (result == ncclSuccess)
      MP_CHECK_NCCL(ncclCommGetAsyncError(comm, &result));
    if (result == ncclSuccess)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  double seconds = nowSeconds() - start;
  MP_CHECK(result == ncclRemoteError)
      << "the all-reduce with a " << how << " peer: " << describeResult(result);
  MP_CHECK(seconds < limitSeconds)
      << "the " << how << " peer was noticed only after " << seconds << " s";
  const char* message = ncclGetLastError(comm);
  MP_CHECK(message != nullptr && message[0] != '\0')
      << "no message for " << describeResult(result);
  start = nowSeconds();
  MP_CHECK_NCCL(ncclCommAbort(comm));
  const ncclResult_t synced = hetcclStreamSynchronize(stream.get());
  MP_CHECK(!onStream || gpuRank || synced != ncclSuccess)
      << "the failed all-reduce's stream synchronized as a success";
  MP_CHECK(nowSeconds() - start < kAbortLimitSeconds)
      << "ncclCommAbort took " << nowSeconds() - start << " s";
}

using KilledPeerParam = StreamModeParam;

// Rank 1 sends itself `signal` just after the others entered an
// all-reduce; they must fail with ncclRemoteError within `limitSeconds`
// (`how` the peer is, for messages) and abort promptly. A stopped rank is
// killed by rank 0 afterwards.
void runWithRankOneSignalled(const KilledPeerParam& param, int timeoutSeconds,
                             int signal, double limitSeconds, const char* how) {
  if (param.domains.env.count("HETCCL_TRANSPORT") &&
      param.domains.env.at("HETCCL_TRANSPORT") == "ucx" && !ucxModuleBuilt())
    GTEST_SKIP() << "this build has no UCX module";
  RunOptions options =
      withEnv({{"HETCCL_TIMEOUT", std::to_string(timeoutSeconds)}}, 90);
  options.expectedSignals[1] = SIGKILL;
  param.domains.applyTo(&options);
  runRanks(
      param.nranks,
      [&](RankContext& ctx) {
        ncclComm_t comm = ctx.initComm();
        checkDomainCount(comm, param.domains.count());
        checkAllReduceSum(comm, 1, ctx.nranks(), nullptr, "before the signal");
        const std::vector<std::string> pids =
            ctx.exchange(std::to_string(::getpid()));
        if (ctx.rank() == 1) {
          sleepSeconds(0.3);
          ::kill(::getpid(), signal);
        }
        expectErrorThenAbort(comm, param.onStream, param.domains.emulatedGpus,
                             limitSeconds, how);
        if (ctx.rank() == 0 && signal != SIGKILL)
          ::kill(std::stoi(pids[1]), SIGKILL);
      },
      options);
}

class KilledPeerTest : public ::testing::TestWithParam<KilledPeerParam> {};

// Rank 1 is SIGKILLed just after the others entered an all-reduce.
TEST_P(KilledPeerTest, OthersGetAnErrorInsteadOfHanging) {
  runWithRankOneSignalled(GetParam(), kPeerTimeoutSeconds, SIGKILL,
                          kPeerTimeoutSeconds + kDetectionSlackSeconds, "dead");
}

INSTANTIATE_TEST_SUITE_P(
    Mp, KilledPeerTest,
    ::testing::Values(
        KilledPeerParam{2, false, oneDomain()},
        KilledPeerParam{3, true, oneDomain()},
        KilledPeerParam{4, false, oneDomain()},
        // The dead rank alone in its domain, and sharing one.
        KilledPeerParam{3, false, domainsByLabel({0, 1, 0})},
        KilledPeerParam{4, true, domainsByLabel({0, 0, 1, 1})},
        // The GPU engine's waits (planner, proxy, stream).
        KilledPeerParam{4, true, emulatedGpuDomains({0, 0, 1, 1})},
        KilledPeerParam{3, true, emulatedGpuDomains({0, 1, 0})},
        // Each its own domain: the stream-driven path.
        KilledPeerParam{3, true, emulatedGpuDomains({0, 1, 2})},
        // Over tcp, every other launch as a graph's replay.
        KilledPeerParam{3, true, emulatedCapturesOverTcp({0, 1, 2})},
        // Pretend hosts linked by UCX: its peer error
        // handling, with the watchdog's pidfds as well.
        KilledPeerParam{4, true, ucxBetweenPretendHosts({0, 0, 1, 1})},
        // The same with the GPU engine handing its buffers to UCX.
        KilledPeerParam{3, true, ucxGpuBuffersBetweenPretendHosts({0, 1, 2})},
        // Pretend hosts linked by an NCCL net plugin (the stand-in, or
        // aws-ofi-nccl in the ctest aws_ofi_nccl_faults).
        KilledPeerParam{4, true, netBetweenPretendHosts({0, 0, 1, 1})},
        KilledPeerParam{3, false, netBetweenPretendHosts({0, 1, 2})}),
    [](const ::testing::TestParamInfo<KilledPeerParam>& info) {
      return info.param.name();
    });

// Rank 1 stops (SIGSTOP): a peer that is silent rather than gone, as a
// hung or frozen process is. Its connections stay up, so only
// HETCCL_TIMEOUT can tell.
class SilentPeerTest : public ::testing::TestWithParam<KilledPeerParam> {};

TEST_P(SilentPeerTest, OthersFailWithinTheTimeout) {
  constexpr int kTimeoutSeconds = 3;
  runWithRankOneSignalled(GetParam(), kTimeoutSeconds, SIGSTOP,
                          kTimeoutSeconds + kDetectionSlackSeconds, "silent");
}

INSTANTIATE_TEST_SUITE_P(
    Mp, SilentPeerTest,
    ::testing::Values(
        KilledPeerParam{3, false, oneDomain()},
        KilledPeerParam{4, true, domainsByLabel({0, 0, 1, 1})},
        KilledPeerParam{4, true, emulatedGpuDomains({0, 0, 1, 1})},
        KilledPeerParam{3, true, emulatedGpuDomains({0, 1, 0})},
        // Each its own domain: the stream-driven path.
        KilledPeerParam{3, true, emulatedGpuDomains({0, 1, 2})},
        KilledPeerParam{3, true, emulatedCapturesOverTcp({0, 1, 2})},
        KilledPeerParam{3, false, ucxBetweenPretendHosts({0, 1, 1})},
        KilledPeerParam{3, true, netBetweenPretendHosts({0, 1, 1})}),
    [](const ::testing::TestParamInfo<KilledPeerParam>& info) {
      return info.param.name();
    });

// After a peer dies, the survivors shrink it away (NCCL_SHRINK_ABORT) and
// carry on with a working communicator.
TEST(Faults, ShrinkAwayAKilledPeer) {
  RunOptions options =
      withEnv({{"HETCCL_TIMEOUT", std::to_string(kPeerTimeoutSeconds)}}, 90);
  options.expectedSignals[1] = SIGKILL;
  runRanks(
      3,
      [](RankContext& ctx) {
        ncclComm_t comm = ctx.initComm();
        checkAllReduceSum(comm, 1, 3, nullptr, "before the kill");
        if (ctx.rank() == 1) {
          sleepSeconds(0.3);
          ::kill(::getpid(), SIGKILL);
        }
        MP_CHECK(secondAllReduceError(comm, false) != ncclSuccess)
            << "the all-reduce with a dead peer reported success";
        int dead[] = {1};
        ncclComm_t shrunk = nullptr;
        MP_CHECK_NCCL(
            ncclCommShrink(comm, dead, 1, &shrunk, nullptr, NCCL_SHRINK_ABORT));
        MP_CHECK(shrunk != nullptr);
        checkAllReduceSum(shrunk, ctx.rank(), 0 + 2, nullptr, "after shrink");
        MP_CHECK_NCCL(ncclCommAbort(comm));
        Comm(shrunk).destroy();
      },
      options);
}

// Rank 2 never calls init: the others' init fails after
// HETCCL_BOOTSTRAP_TIMEOUT (3 s) instead of waiting forever.
TEST(Faults, RankThatNeverArrivesAtInit) {
  RunOptions options = withEnv({{"HETCCL_BOOTSTRAP_TIMEOUT", "3"}}, 40);
  runRanks(
      3,
      [](RankContext& ctx) {
        if (ctx.rank() == 2) return;
        ncclComm_t comm = nullptr;
        double start = nowSeconds();
        ncclResult_t result =
            ncclCommInitRank(&comm, ctx.nranks(), ctx.id(), ctx.rank());
        double seconds = nowSeconds() - start;
        MP_CHECK(result != ncclSuccess && result != ncclInProgress)
            << "init succeeded without rank 2: " << describeResult(result);
        MP_CHECK(seconds > 2.0 && seconds < 9.0)
            << "init gave up after " << seconds << " s with a 3 s timeout";
        const char* message = ncclGetLastError(nullptr);
        MP_CHECK(message != nullptr && message[0] != '\0')
            << "no message for " << describeResult(result);
      },
      options);
}

// ncclCommInitAll starts a thread per rank, and the ranks wait for each
// other. When one cannot start (a thread limit), the started ones stop at
// once and the call fails naming the cause, instead of waiting out
// HETCCL_BOOTSTRAP_TIMEOUT for the rank that never started.
TEST(Faults, InitAllWhoseThreadCannotStartFailsAtOnce) {
  RunOptions options = withEnv({{"HETCCL_BOOTSTRAP_TIMEOUT", "30"}}, 60);
  options.createUniqueId = false;
  runRanks(
      1,
      [](RankContext&) {
        constexpr int kRanks = 4;
        std::vector<ncclComm_t> comms(kRanks, nullptr);
        threadsBeforeFailure = 2;  // the root's and rank 0's; not rank 1's
        const double start = nowSeconds();
        const ncclResult_t result =
            ncclCommInitAll(comms.data(), kRanks, nullptr);
        const double seconds = nowSeconds() - start;
        threadsBeforeFailure = -1;
        const std::string message = ncclGetLastError(nullptr);
        MP_CHECK(result == ncclSystemError) << describeResult(result);
        MP_CHECK(message.find("cannot start a thread for job 2 of 4") !=
                 std::string::npos)
            << message;
        MP_CHECK(seconds < 3)
            << "ncclCommInitAll failed after " << seconds << " s: " << message;
        // With threads to be had again, the same call works.
        MP_CHECK_NCCL(ncclCommInitAll(comms.data(), kRanks, nullptr));
        for (ncclComm_t comm : comms) Comm(comm).destroy();
      },
      options);
}

// A client socket to 127.0.0.1:port, or -1.
int connectTo(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) !=
      0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Retries until the root listens (rank 0 starts it at init).
int connectWhenListening(int port, double timeoutSeconds) {
  double deadline = nowSeconds() + timeoutSeconds;
  while (nowSeconds() < deadline) {
    int fd = connectTo(port);
    if (fd >= 0) return fd;
    sleepSeconds(0.01);
  }
  return -1;
}

void sendBytes(int fd, const std::vector<unsigned char>& bytes) {
  ssize_t ignored = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  (void)ignored;
}

// Strangers at the bootstrap port: random bytes, a header of 0xff (a huge
// length to a naive reader), a connection closed at once, and one that
// connects and then says nothing while the ranks start.
class Strangers {
 public:
  explicit Strangers(int port) : port_(port) {}
  ~Strangers() {
    for (int fd : open_) ::close(fd);
  }
  Strangers(const Strangers&) = delete;
  Strangers& operator=(const Strangers&) = delete;

  void visit() {
    int idle = connectWhenListening(port_, 20);
    if (idle < 0) {
      ADD_FAILURE() << "nobody listened on the bootstrap port " << port_;
      return;
    }
    open_.push_back(idle);  // silent until the ranks are done
    std::vector<unsigned char> random(1000);
    for (size_t i = 0; i < random.size(); ++i) random[i] = (i * 131 + 7) & 0xff;
    sendAndMaybeClose(random, true);
    sendAndMaybeClose(std::vector<unsigned char>(64, 0xff), false);
    sendAndMaybeClose({}, true);
    sendAndMaybeClose(std::vector<unsigned char>(3, 0x00), false);
  }

 private:
  void sendAndMaybeClose(const std::vector<unsigned char>& bytes, bool close) {
    int fd = connectTo(port_);
    if (fd < 0) return;
    sendBytes(fd, bytes);
    if (close) {
      ::close(fd);
    } else {
      open_.push_back(fd);
    }
  }

  int port_;
  std::vector<int> open_;
};

TEST(Faults, StrangersAtTheBootstrapPort) {
  int port = findFreeTcpPort();
  ASSERT_GT(port, 0);
  Strangers strangers(port);
  RunOptions options =
      withEnv({{"HETCCL_COMM_ID", "127.0.0.1:" + std::to_string(port)},
               {"HETCCL_BOOTSTRAP_TIMEOUT", "20"}},
              60);
  options.whileRunning = [&](const std::vector<pid_t>&) { strangers.visit(); };
  runRanks(
      3,
      [](RankContext& ctx) {
        // Let the strangers get there first.
        if (ctx.rank() != 0) sleepSeconds(1.0);
        Comm comm(ctx.initComm());
        checkAllReduceSum(comm.get(), ctx.rank() + 1, 6, nullptr,
                          "after strangers visited the bootstrap port");
        comm.destroy();
      },
      options);
}

// The names in /dev/shm that a segment of process `pid` would have
// ("/<prefix>-<pid>-<random>").
std::vector<std::string> shmNamesOf(pid_t pid) {
  std::vector<std::string> names;
  const std::string mark = "-" + std::to_string(pid) + "-";
  DIR* dir = ::opendir("/dev/shm");
  if (dir == nullptr) return names;
  while (dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name.rfind("hetccl", 0) == 0 && name.find(mark) != std::string::npos)
      names.push_back(name);
  }
  ::closedir(dir);
  return names;
}

// Rank 2 is killed right after it created its shared-memory segment, in
// the middle of init (#13, finding 5). The others' init fails promptly,
// not after HETCCL_BOOTSTRAP_TIMEOUT: the first rank that notices tells
// the others. (The survivors stay alive a while after their failure, as a
// program that handles the error would: the others must not need their
// exit to notice.) Nothing of any rank stays in /dev/shm: the survivors
// remove the name the dead rank could not.
TEST(Faults, RankKilledInTheMiddleOfInitLeavesNothing) {
  constexpr int kVictim = 2;
  constexpr double kFailLimitSeconds = 3;
  constexpr double kLingerSeconds = 5;
  RunOptions options = withEnv({{"HETCCL_BOOTSTRAP_TIMEOUT", "100"}}, 120);
  options.expectedSignals[kVictim] = SIGKILL;
  std::vector<pid_t> ranks;
  options.whileRunning = [&](const std::vector<pid_t>& children) {
    ranks = children;
  };
  runRanks(
      4,
      [&](RankContext& ctx) {
        if (ctx.rank() == kVictim) killAfterCreatingASegment = true;
        ncclComm_t comm = nullptr;
        double start = nowSeconds();
        ncclResult_t result =
            ncclCommInitRank(&comm, ctx.nranks(), ctx.id(), ctx.rank());
        double seconds = nowSeconds() - start;
        MP_CHECK(result == ncclRemoteError)
            << "init with a rank killed in it: " << describeResult(result);
        MP_CHECK(seconds < kFailLimitSeconds)
            << "init noticed the dead rank only after " << seconds << " s";
        const char* message = ncclGetLastError(nullptr);
        MP_CHECK(message != nullptr && message[0] != '\0')
            << "no message for " << describeResult(result);
        sleepSeconds(kLingerSeconds);
      },
      options);
  for (pid_t pid : ranks) {
    const std::vector<std::string> left = shmNamesOf(pid);
    EXPECT_EQ(left, std::vector<std::string>())
        << "left in /dev/shm by process " << pid;
    for (const std::string& name : left) ::unlink(("/dev/shm/" + name).c_str());
  }
}

// Every rank is killed right after it created its segment (#29): nobody is
// left to remove the names, so they stay in /dev/shm. The next init on the
// host removes them, since their makers are gone.
TEST(Faults, NamesLeftByAnInitWhoseRanksAllDiedGoAtTheNextInit) {
  RunOptions killed = withEnv({}, 60);
  killed.expectedSignals = {{0, SIGKILL}, {1, SIGKILL}};
  std::vector<pid_t> dead;
  killed.whileRunning = [&](const std::vector<pid_t>& children) {
    dead = children;
  };
  runRanks(
      2,
      [](RankContext& ctx) {
        killOnceAllCreatedASegment = &ctx;
        ncclComm_t comm = nullptr;
        ncclCommInitRank(&comm, ctx.nranks(), ctx.id(), ctx.rank());
        MP_FAIL() << "init went on after the segment was created";
      },
      killed);
  ASSERT_EQ(dead.size(), 2u);
  // An init of a test running beside this one may have removed them
  // already, which is the behaviour under test, seen elsewhere.
  bool leftSome = false;
  for (pid_t pid : dead) leftSome = leftSome || !shmNamesOf(pid).empty();
  if (!leftSome)
    GTEST_SKIP() << "another init on this host removed the names first";
  runRanks(2, [](RankContext& ctx) {
    Comm comm(ctx.initComm());
    comm.destroy();
  });
  for (pid_t pid : dead) {
    const std::vector<std::string> left = shmNamesOf(pid);
    EXPECT_EQ(left, std::vector<std::string>())
        << "still in /dev/shm from process " << pid;
    for (const std::string& name : left) ::unlink(("/dev/shm/" + name).c_str());
  }
}

}  // namespace
}  // namespace hetccl::mp
