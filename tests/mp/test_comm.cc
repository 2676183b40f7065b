// Communicator lifecycle through the public API: count and rank, split by
// colour and key, shrink, nonblocking init, finalize/destroy, several ranks
// in one process (ncclCommInitAll), configs from older and newer headers,
// the version code and nested groups.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <map>
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
#include "hetccl.h"

namespace hetccl::mp {
namespace {

constexpr double kSettleSeconds = 30;

int commCount(ncclComm_t comm) {
  int count = -1;
  MP_CHECK_NCCL(ncclCommCount(comm, &count));
  return count;
}

int commRank(ncclComm_t comm) {
  int rank = -1;
  MP_CHECK_NCCL(ncclCommUserRank(comm, &rank));
  return rank;
}

int64_t sumOfRankNumbers(const std::vector<int>& ranks) {
  int64_t sum = 0;
  for (int r : ranks) sum += r + 1;
  return sum;
}

TEST(Comm, CountRankRuntimeAndDomains) {
  runRanks(3, [](RankContext& ctx) {
    Comm comm(ctx.initComm());
    MP_CHECK(commCount(comm.get()) == 3);
    MP_CHECK(commRank(comm.get()) == ctx.rank());
    hetcclRuntimeKind_t kind = hetcclRuntimeCuda;
    MP_CHECK_NCCL(hetcclCommRuntime(comm.get(), &kind));
    MP_CHECK(kind == hetcclRuntimeHost) << "runtime kind " << kind;
    int ndomains = 0, domain = -1;
    MP_CHECK_NCCL(hetcclCommDomains(comm.get(), &ndomains, &domain));
    MP_CHECK(ndomains >= 1 && domain >= 0 && domain < ndomains)
        << ndomains << " domains, this rank in " << domain;
    checkAllReduceSum(comm.get(), ctx.rank() + 1, 6, nullptr, "base comm");
    comm.destroy();
  });
}

// Buffers from ncclMemAlloc are host memory on CPU ranks and work as
// collective buffers.
// A process with AMD's runtime loaded but no AMD device is a CPU rank: its
// init says why, and a communicator of several domains still forms and
// works. Uses Debian's HIP runtime (libamdhip64-dev), as CI installs it.
TEST(Comm, HipRuntimeWithoutDeviceLeavesACpuRankInAMixedCommunicator) {
  const char* hipRuntime = "libamdhip64.so.5";
  void* probe = dlopen(hipRuntime, RTLD_NOW | RTLD_LOCAL);
  if (probe == nullptr) GTEST_SKIP() << "no HIP runtime here: " << dlerror();
  dlclose(probe);
  const std::string logPath =
      "/tmp/hetccl-hip-rank0-" + std::to_string(getpid()) + ".log";
  RunOptions options;
  options.env["HETCCL_DOMAINS"] = "0,1";
  options.rankEnv = [&](int rank) {
    std::map<std::string, std::string> env;
    if (rank == 0) {
      env["HETCCL_DEBUG"] = "INFO";
      env["HETCCL_DEBUG_SUBSYS"] = "INIT";
      env["HETCCL_DEBUG_FILE"] = logPath;
    }
    return env;
  };
  runRanks(
      2,
      [&](RankContext& ctx) {
        if (ctx.rank() == 0) {
          // As PyTorch's ROCm build would: the runtime in the global scope.
          MP_CHECK(dlopen(hipRuntime, RTLD_NOW | RTLD_GLOBAL) != nullptr)
              << dlerror();
        }
        Comm comm(ctx.initComm());
        hetcclRuntimeKind_t kind = hetcclRuntimeHip;
        MP_CHECK_NCCL(hetcclCommRuntime(comm.get(), &kind));
        MP_CHECK(kind == hetcclRuntimeHost) << "runtime kind " << kind;
        int ndomains = 0, domain = -1;
        MP_CHECK_NCCL(hetcclCommDomains(comm.get(), &ndomains, &domain));
        MP_CHECK(ndomains == 2) << ndomains << " domains";
        checkAllReduceSum(comm.get(), ctx.rank() + 1, 3, nullptr, "mixed");
        comm.destroy();
        if (ctx.rank() == 0) {
          std::string log = readFile(logPath);
          MP_CHECK(log.find("HIP runtime is loaded but reports no device") !=
                   std::string::npos)
              << "init log:\n"
              << log;
        }
      },
      options);
  unlink(logPath.c_str());
}

TEST(Comm, MemAllocBuffersWork) {
  runRanks(2, [](RankContext& ctx) {
    Comm comm(ctx.initComm());
    void* send = nullptr;
    void* recv = nullptr;
    MP_CHECK_NCCL(ncclMemAlloc(&send, 1024 * sizeof(int)));
    MP_CHECK_NCCL(ncclMemAlloc(&recv, 1024 * sizeof(int)));
    MP_CHECK(send != nullptr && recv != nullptr);
    auto* in = static_cast<int*>(send);
    auto* out = static_cast<int*>(recv);
    for (int i = 0; i < 1024; ++i) in[i] = i * (ctx.rank() + 1);
    MP_CHECK_NCCL(ncclAllReduce(send, recv, 1024, ncclInt32, ncclSum,
                                comm.get(), nullptr));
    for (int i = 0; i < 1024; ++i) {
      MP_CHECK(out[i] == 3 * i) << "element " << i << " is " << out[i];
    }
    MP_CHECK_NCCL(ncclMemFree(send));
    MP_CHECK_NCCL(ncclMemFree(recv));
    comm.destroy();
  });
}

class SplitTest : public ::testing::TestWithParam<int> {};

// Colour rank % 2 with keys that reverse the order; rank 0 opts out with
// NCCL_SPLIT_NOCOLOR and must get NULL.
TEST_P(SplitTest, ColourAndReversingKey) {
  runRanks(GetParam(), [](RankContext& ctx) {
    Comm parent(ctx.initComm());
    int n = ctx.nranks(), me = ctx.rank();
    int colour = me == 0 ? NCCL_SPLIT_NOCOLOR : me % 2;
    ncclComm_t raw = nullptr;
    MP_CHECK_NCCL(ncclCommSplit(parent.get(), colour, n - me, &raw, nullptr));
    if (colour == NCCL_SPLIT_NOCOLOR) {
      MP_CHECK(raw == nullptr) << "NOCOLOR rank got a communicator";
      checkAllReduceSum(parent.get(), 1, n, nullptr, "parent after split");
      parent.destroy();
      return;
    }
    Comm child(raw);
    // Members: ranks with this colour except 0, ordered by descending rank.
    std::vector<int> members;
    for (int r = n - 1; r >= 1; --r) {
      if (r % 2 == colour) members.push_back(r);
    }
    MP_CHECK(commCount(child.get()) == static_cast<int>(members.size()))
        << "colour " << colour;
    int expectedRank = 0;
    while (members[expectedRank] != me) ++expectedRank;
    MP_CHECK(commRank(child.get()) == expectedRank)
        << "rank " << me << " has rank " << commRank(child.get())
        << " in colour " << colour << ", expected " << expectedRank;
    std::vector<int64_t> order = allGatherOne(child.get(), me, "split");
    for (size_t i = 0; i < members.size(); ++i) {
      MP_CHECK(order[i] == members[i])
          << "rank " << i << " of colour " << colour << " is parent rank "
          << order[i] << ", expected " << members[i];
    }
    checkAllReduceSum(child.get(), me + 1, sumOfRankNumbers(members), nullptr,
                      "split comm");
    // The parent still works while the child exists.
    checkAllReduceSum(parent.get(), 1, n, nullptr, "parent after split");
    child.destroy();
    parent.destroy();
  });
}

INSTANTIATE_TEST_SUITE_P(Mp, SplitTest, ::testing::Values(2, 4, 8),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::to_string(info.param) + "ranks";
                         });

// Equal keys keep the parent's order; a split of a split works; colours
// need not be small or contiguous.
TEST(Comm, SplitEqualKeysAndNestedSplit) {
  runRanks(4, [](RankContext& ctx) {
    Comm parent(ctx.initComm());
    int me = ctx.rank();
    ncclComm_t raw = nullptr;
    MP_CHECK_NCCL(ncclCommSplit(parent.get(), 1000 + me / 2, 7, &raw, nullptr));
    Comm pair(raw);
    MP_CHECK(commCount(pair.get()) == 2);
    MP_CHECK(commRank(pair.get()) == me % 2);
    checkAllReduceSum(pair.get(), me + 1, me / 2 == 0 ? 3 : 7, nullptr, "pair");

    MP_CHECK_NCCL(ncclCommSplit(pair.get(), me % 2, 0, &raw, nullptr));
    Comm single(raw);
    MP_CHECK(commCount(single.get()) == 1);
    MP_CHECK(commRank(single.get()) == 0);
    checkAllReduceSum(single.get(), 5, 5, nullptr, "single-rank comm");
    single.destroy();
    pair.destroy();
    parent.destroy();
  });
}

// One rank's bad colour fails the split on every rank at once (the
// others are told which rank), and the parent stays in step: the next
// split and an all-reduce work.
TEST(Comm, ABadColourOnOneRankFailsTheSplitEverywhere) {
  runRanks(3, [](RankContext& ctx) {
    Comm parent(ctx.initComm());
    int me = ctx.rank();
    ncclComm_t raw = nullptr;
    auto start = std::chrono::steady_clock::now();
    ncclResult_t result =
        ncclCommSplit(parent.get(), me == 1 ? -5 : 0, me, &raw, nullptr);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    MP_CHECK(result == ncclInvalidArgument) << describeResult(result);
    MP_CHECK(raw == nullptr);
    MP_CHECK(seconds < 5) << "the failed split took " << seconds << " s";
    const std::string error = ncclGetLastError(parent.get());
    const std::string expected =
        me == 1 ? "color must be non-negative" : "rank 1 passed invalid";
    MP_CHECK(error.find(expected) != std::string::npos) << error;
    checkAllReduceSum(parent.get(), me + 1, 6, nullptr, "after a failed split");
    MP_CHECK_NCCL(ncclCommSplit(parent.get(), 0, me, &raw, nullptr));
    Comm child(raw);
    checkAllReduceSum(child.get(), 1, 3, nullptr, "the next split");
    child.destroy();
    parent.destroy();
  });
}

// Splits of a two-domain communicator: one that crosses the domains and
// one that stays inside each.
TEST(Comm, SplitAcrossAndWithinDomains) {
  RunOptions options;
  domainsByLabel({0, 0, 1, 1}).applyTo(&options);
  runRanks(
      4,
      [](RankContext& ctx) {
        Comm parent(ctx.initComm());
        checkDomainCount(parent.get(), 2);
        int me = ctx.rank();
        ncclComm_t raw = nullptr;
        MP_CHECK_NCCL(ncclCommSplit(parent.get(), me % 2, me, &raw, nullptr));
        Comm across(raw);
        checkDomainCount(across.get(), 2);
        checkAllReduceSum(across.get(), me + 1, me % 2 == 0 ? 1 + 3 : 2 + 4,
                          nullptr, "split across domains");
        MP_CHECK_NCCL(ncclCommSplit(parent.get(), me / 2, me, &raw, nullptr));
        Comm within(raw);
        checkDomainCount(within.get(), 1);
        checkAllReduceSum(within.get(), me + 1, me / 2 == 0 ? 1 + 2 : 3 + 4,
                          nullptr, "split within a domain");
        within.destroy();
        across.destroy();
        parent.destroy();
      },
      options);
}

// Rank 2 is excluded and does not call ncclCommShrink.
TEST(Comm, ShrinkExcludingOneRank) {
  runRanks(4, [](RankContext& ctx) {
    Comm parent(ctx.initComm());
    int me = ctx.rank();
    int excluded[] = {2};
    if (me != 2) {
      ncclComm_t raw = nullptr;
      MP_CHECK_NCCL(ncclCommShrink(parent.get(), excluded, 1, &raw, nullptr,
                                   NCCL_SHRINK_DEFAULT));
      MP_CHECK(raw != nullptr);
      Comm shrunk(raw);
      MP_CHECK(commCount(shrunk.get()) == 3);
      int expectedRank = me < 2 ? me : me - 1;
      MP_CHECK(commRank(shrunk.get()) == expectedRank)
          << "rank " << commRank(shrunk.get()) << ", expected " << expectedRank;
      checkAllReduceSum(shrunk.get(), me + 1, 1 + 2 + 4, nullptr, "shrunk");
      shrunk.destroy();
    }
    parent.destroy();
  });
}

ncclConfig_t nonblockingConfig() {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  return config;
}

// blocking = 0: init may answer ncclInProgress; the communicator is ready
// once ncclCommGetAsyncError says ncclSuccess.
TEST(Comm, NonblockingInitSplitAndFinalize) {
  runRanks(3, [](RankContext& ctx) {
    ncclConfig_t config = nonblockingConfig();
    ncclComm_t raw = nullptr;
    ncclResult_t result = ncclCommInitRankConfig(&raw, ctx.nranks(), ctx.id(),
                                                 ctx.rank(), &config);
    MP_CHECK(result == ncclSuccess || result == ncclInProgress)
        << "nonblocking init returned " << describeResult(result);
    MP_CHECK(raw != nullptr) << "no communicator handle while in progress";
    MP_CHECK_NCCL(waitWhileInProgress(raw, kSettleSeconds))
        << "waiting for nonblocking init";
    Comm comm(raw);
    checkAllReduceSum(comm.get(), ctx.rank() + 1, 6, nullptr, "nonblocking");
    HostStream stream;
    checkAllReduceSum(comm.get(), 2, 6, stream.get(), "nonblocking, stream");

    ncclConfig_t splitConfig = nonblockingConfig();
    ncclComm_t child = nullptr;
    result = ncclCommSplit(comm.get(), 0, ctx.rank(), &child, &splitConfig);
    MP_CHECK(result == ncclSuccess || result == ncclInProgress)
        << "nonblocking split returned " << describeResult(result);
    MP_CHECK(child != nullptr);
    MP_CHECK_NCCL(waitWhileInProgress(child, kSettleSeconds))
        << "waiting for nonblocking split";
    Comm childComm(child);
    checkAllReduceSum(childComm.get(), 1, 3, nullptr, "nonblocking split");
    childComm.destroy();  // finalize may answer ncclInProgress: settled
    comm.destroy();
  });
}

// Work queued on a host stream is completed by ncclCommFinalize.
TEST(Comm, FinalizeCompletesQueuedWork) {
  runRanks(2, [](RankContext& ctx) {
    ncclComm_t comm = ctx.initComm();
    HostStream stream;
    std::vector<int64_t> send(10000, ctx.rank() + 1), recv(10000, 0);
    MP_CHECK_NCCL(ncclAllReduce(send.data(), recv.data(), send.size(),
                                ncclInt64, ncclSum, comm, stream.get()));
    MP_CHECK_NCCL(ncclCommFinalize(comm));
    stream.synchronize();
    for (size_t i = 0; i < recv.size(); ++i) {
      MP_CHECK(recv[i] == 3) << "element " << i << " is " << recv[i];
    }
    MP_CHECK_NCCL(ncclCommDestroy(comm));
  });
}

RunOptions singleProcess();

// Destroying a communicator whose nonblocking init waits for a rank that
// never comes stops the init at once (it would otherwise wait out
// HETCCL_BOOTSTRAP_TIMEOUT, 300 s by default).
TEST(Comm, DestroyDuringNonblockingInitReturnsAtOnce) {
  runRanks(
      1,
      [](RankContext&) {
        ncclUniqueId id;
        MP_CHECK_NCCL(ncclGetUniqueId(&id));
        ncclConfig_t config = nonblockingConfig();
        ncclComm_t comm = nullptr;
        ncclResult_t result = ncclCommInitRankConfig(&comm, 2, id, 0, &config);
        MP_CHECK(result == ncclInProgress) << describeResult(result);
        ncclResult_t state = ncclSuccess;
        MP_CHECK_NCCL(ncclCommGetAsyncError(comm, &state));
        MP_CHECK(state == ncclInProgress) << describeResult(state);
        auto start = std::chrono::steady_clock::now();
        MP_CHECK_NCCL(ncclCommDestroy(comm));
        double seconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - start)
                             .count();
        MP_CHECK(seconds < 5) << "ncclCommDestroy took " << seconds << " s";
      },
      singleProcess());
}

RunOptions singleProcess() {
  RunOptions options;
  options.createUniqueId = false;
  return options;
}

class InitAllTest : public ::testing::TestWithParam<int> {};

// ncclCommInitAll makes ndev CPU ranks in one process; an all-reduce over
// them must be issued in one group, each on its own host stream.
TEST_P(InitAllTest, GroupedAllReduceOverInProcessRanks) {
  int ndev = GetParam();
  runRanks(
      1,
      [ndev](RankContext&) {
        std::vector<ncclComm_t> comms(ndev, nullptr);
        MP_CHECK_NCCL(ncclCommInitAll(comms.data(), ndev, nullptr));
        std::vector<std::vector<float>> send(ndev), recv(ndev);
        std::vector<cudaStream_t> streams(ndev, nullptr);
        for (int i = 0; i < ndev; ++i) {
          MP_CHECK(comms[i] != nullptr);
          MP_CHECK(commCount(comms[i]) == ndev);
          MP_CHECK(commRank(comms[i]) == i) << "comms[" << i << "]";
          MP_CHECK_NCCL(hetcclStreamCreate(&streams[i]));
          send[i].assign(1001, static_cast<float>(i + 1));
          recv[i].assign(1001, -1.0f);
        }
        MP_CHECK_NCCL(ncclGroupStart());
        for (int i = 0; i < ndev; ++i) {
          MP_CHECK_NCCL(ncclAllReduce(send[i].data(), recv[i].data(), 1001,
                                      ncclFloat32, ncclSum, comms[i],
                                      streams[i]));
        }
        MP_CHECK_NCCL(ncclGroupEnd());
        float expected = ndev * (ndev + 1) / 2.0f;
        for (int i = 0; i < ndev; ++i) {
          MP_CHECK_NCCL(hetcclStreamSynchronize(streams[i]));
          for (float value : recv[i]) {
            MP_CHECK(value == expected) << "rank " << i << " got " << value;
          }
          MP_CHECK_NCCL(hetcclStreamDestroy(streams[i]));
        }
        for (ncclComm_t comm : comms) Comm(comm).destroy();
      },
      singleProcess());
}

// The same with NULL streams: the group runs at ncclGroupEnd, which must
// drive all in-process ranks together rather than one after the other.
TEST_P(InitAllTest, GroupedAllReduceOnNullStreams) {
  int ndev = GetParam();
  RunOptions options = singleProcess();
  options.timeoutSeconds = 30;
  runRanks(
      1,
      [ndev](RankContext&) {
        std::vector<ncclComm_t> comms(ndev, nullptr);
        MP_CHECK_NCCL(ncclCommInitAll(comms.data(), ndev, nullptr));
        std::vector<std::vector<int32_t>> send(ndev), recv(ndev);
        MP_CHECK_NCCL(ncclGroupStart());
        for (int i = 0; i < ndev; ++i) {
          send[i].assign(77, i + 1);
          recv[i].assign(77, -1);
          MP_CHECK_NCCL(ncclAllReduce(send[i].data(), recv[i].data(), 77,
                                      ncclInt32, ncclMax, comms[i], nullptr));
        }
        MP_CHECK_NCCL(ncclGroupEnd());
        for (int i = 0; i < ndev; ++i) {
          for (int32_t value : recv[i]) {
            MP_CHECK(value == ndev) << "rank " << i << " got " << value;
          }
        }
        for (ncclComm_t comm : comms) Comm(comm).destroy();
      },
      options);
}

INSTANTIATE_TEST_SUITE_P(Mp, InitAllTest, ::testing::Values(2, 4),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::to_string(info.param) + "devices";
                         });

// A config as a caller built against an older nccl.h passes it: only
// `size` bytes exist. It is placed right before an unreadable page, so
// reading any field past `size` crashes the rank.
class TruncatedConfig {
 public:
  TruncatedConfig(size_t size, int version) {
    page_ = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    void* mapping = ::mmap(nullptr, 2 * page_, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    MP_CHECK(mapping != MAP_FAILED) << "mmap";
    mapping_ = static_cast<unsigned char*>(mapping);
    MP_CHECK(::mprotect(mapping_ + page_, page_, PROT_NONE) == 0);
    ncclConfig_t full = NCCL_CONFIG_INITIALIZER;
    full.size = size;
    full.version = static_cast<unsigned int>(version);
    full.blocking = 1;
    start_ = mapping_ + page_ - size;
    std::memcpy(start_, &full, size);
  }
  ~TruncatedConfig() { ::munmap(mapping_, 2 * page_); }
  TruncatedConfig(const TruncatedConfig&) = delete;
  TruncatedConfig& operator=(const TruncatedConfig&) = delete;

  ncclConfig_t* get() { return reinterpret_cast<ncclConfig_t*>(start_); }

 private:
  size_t page_ = 0;
  unsigned char* mapping_ = nullptr;
  unsigned char* start_ = nullptr;
};

// A config from a newer header: more fields after ours.
struct FutureConfig {
  ncclConfig_t known;
  int futureInts[6];
  const char* futurePointer;
};

void initWithConfig(RankContext& ctx, ncclConfig_t* config,
                    const std::string& what) {
  ncclUniqueId id = ctx.shareNewUniqueId();
  ncclComm_t raw = nullptr;
  MP_CHECK_NCCL(
      ncclCommInitRankConfig(&raw, ctx.nranks(), id, ctx.rank(), config))
      << "with " << what;
  Comm comm(raw);
  checkAllReduceSum(comm.get(), ctx.rank() + 1, 3, nullptr, what);
  comm.destroy();
}

TEST(Comm, ConfigsFromOlderAndNewerHeaders) {
  runRanks(2, [](RankContext& ctx) {
    TruncatedConfig v2_14(offsetof(ncclConfig_t, splitShare),
                          NCCL_VERSION(2, 14, 3));
    initWithConfig(ctx, v2_14.get(), "a 2.14-sized config");
    TruncatedConfig v2_27(offsetof(ncclConfig_t, nChannelsPerNetPeer),
                          NCCL_VERSION(2, 27, 3));
    initWithConfig(ctx, v2_27.get(), "a 2.27-sized config");

    FutureConfig future;
    future.known = NCCL_CONFIG_INITIALIZER;
    future.known.size = sizeof(FutureConfig);
    future.known.version = NCCL_VERSION(2, 31, 0);
    for (int& field : future.futureInts) field = NCCL_CONFIG_UNDEF_INT;
    future.futurePointer = nullptr;
    initWithConfig(ctx, &future.known, "a larger config from a newer header");

    // Split also takes a config.
    Comm parent(ctx.initComm());
    TruncatedConfig splitConfig(offsetof(ncclConfig_t, splitShare),
                                NCCL_VERSION(2, 14, 3));
    ncclComm_t child = nullptr;
    MP_CHECK_NCCL(
        ncclCommSplit(parent.get(), 0, ctx.rank(), &child, splitConfig.get()));
    Comm childComm(child);
    checkAllReduceSum(childComm.get(), 1, 2, nullptr, "split, old config");
    childComm.destroy();
    parent.destroy();
  });
}

// ncclCommInitRankScalable with a single id behaves like ncclCommInitRank.
TEST(Comm, InitRankScalableWithOneId) {
  runRanks(3, [](RankContext& ctx) {
    ncclUniqueId id = ctx.id();
    ncclComm_t raw = nullptr;
    MP_CHECK_NCCL(ncclCommInitRankScalable(&raw, ctx.nranks(), ctx.rank(), 1,
                                           &id, nullptr));
    Comm comm(raw);
    MP_CHECK(commRank(comm.get()) == ctx.rank());
    checkAllReduceSum(comm.get(), ctx.rank() + 1, 6, nullptr, "scalable");
    comm.destroy();
  });
}

// Two communicators over the same ranks, each driven by its own thread
// (one on the NULL stream, one on a host stream), at the same time.
TEST(Comm, TwoCommunicatorsDrivenFromTwoThreads) {
  runRanks(3, [](RankContext& ctx) {
    Comm first(ctx.initComm());
    ncclUniqueId secondId = ctx.shareNewUniqueId();
    ncclComm_t raw = nullptr;
    MP_CHECK_NCCL(ncclCommInitRank(&raw, ctx.nranks(), secondId, ctx.rank()));
    Comm second(raw);
    HostStream stream;
    int64_t mine = ctx.rank() + 1;
    std::thread other([&] {
      for (int i = 0; i < 50; ++i) {
        checkAllReduceSum(second.get(), mine * i, 6 * i, stream.get(),
                          "second comm, iteration " + std::to_string(i));
      }
    });
    for (int i = 0; i < 50; ++i) {
      checkAllReduceSum(first.get(), mine, 6, nullptr,
                        "first comm, iteration " + std::to_string(i));
    }
    other.join();
    second.destroy();
    first.destroy();
  });
}

TEST(Comm, VersionIsAnNcclStyleCode) {
  runRanks(
      1,
      [](RankContext&) {
        int version = 0;
        MP_CHECK_NCCL(ncclGetVersion(&version));
        MP_CHECK(version >= 22800 && version < 30000) << "version " << version;
        MP_CHECK(version / 10000 == NCCL_MAJOR &&
                 version / 100 % 100 == NCCL_MINOR)
            << "version " << version << " does not match nccl.h's "
            << NCCL_VERSION_CODE;
      },
      singleProcess());
}

// Nested groups run at the outermost ncclGroupEnd: after the inner end,
// nothing has run yet (on the NULL stream, which otherwise runs at once).
TEST(Comm, NestedGroupsRunAtOutermostEnd) {
  runRanks(3, [](RankContext& ctx) {
    Comm comm(ctx.initComm());
    int n = ctx.nranks(), me = ctx.rank();
    std::vector<int32_t> send(33, me + 1), sum(33, -1);
    int32_t token = 100 + me, received = -1;
    MP_CHECK_NCCL(ncclGroupStart());
    MP_CHECK_NCCL(ncclAllReduce(send.data(), sum.data(), 33, ncclInt32, ncclSum,
                                comm.get(), nullptr));
    MP_CHECK_NCCL(ncclGroupStart());
    MP_CHECK_NCCL(
        ncclSend(&token, 1, ncclInt32, (me + 1) % n, comm.get(), nullptr));
    MP_CHECK_NCCL(ncclRecv(&received, 1, ncclInt32, (me + n - 1) % n,
                           comm.get(), nullptr));
    MP_CHECK_NCCL(ncclGroupEnd());
    MP_CHECK(received == -1 && sum[0] == -1)
        << "operations ran at the inner ncclGroupEnd";
    MP_CHECK_NCCL(ncclGroupEnd());
    MP_CHECK(received == 100 + (me + n - 1) % n) << "received " << received;
    for (int32_t value : sum) MP_CHECK(value == 6) << "sum " << value;
    comm.destroy();
  });
}

}  // namespace
}  // namespace hetccl::mp
