// Wrong calls return ncclInvalidArgument or ncclInvalidUsage, with a
// message from ncclGetLastError that names the problem, and never crash:
// null pointers, unknown types and ops, roots and peers out of range, sizes
// that overflow, null/destroyed communicators, corrupted ids, bad ranks,
// foreign streams, and features that cannot apply to CPU ranks.
#include <gtest/gtest.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "harness/check.h"
#include "harness/nccl_handles.h"
#include "harness/run_ranks.h"
#include "hetccl.h"

namespace hetccl::mp {
namespace {

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return text;
}

// Checks that `got` is one of `allowed` and that the last error message
// (for `comm`, which may be NULL) mentions one of `keywords`.
void checkRejected(ncclResult_t got,
                   std::initializer_list<ncclResult_t> allowed, ncclComm_t comm,
                   std::initializer_list<const char*> keywords,
                   const std::string& what) {
  bool expected =
      std::find(allowed.begin(), allowed.end(), got) != allowed.end();
  std::string allowedNames;
  for (ncclResult_t r : allowed)
    allowedNames += std::string(" ") + resultName(r);
  MP_CHECK(expected) << what << " returned " << describeResult(got)
                     << "; expected one of" << allowedNames;
  const char* message = ncclGetLastError(comm);
  MP_CHECK(message != nullptr && message[0] != '\0')
      << what << ": ncclGetLastError is empty";
  std::string text = lowercase(message);
  bool mentioned = false;
  for (const char* keyword : keywords) {
    mentioned = mentioned || text.find(lowercase(keyword)) != std::string::npos;
  }
  MP_CHECK(mentioned) << what << ": the message \"" << message
                      << "\" does not mention the problem";
}

void checkInvalidArgument(ncclResult_t got, ncclComm_t comm,
                          std::initializer_list<const char*> keywords,
                          const std::string& what) {
  checkRejected(got, {ncclInvalidArgument}, comm, keywords, what);
}

size_t residentBytes() {
  size_t pages = 0, resident = 0;
  std::ifstream("/proc/self/statm") >> pages >> resident;
  return resident * 4096;
}

RunOptions quick() {
  RunOptions options;
  options.timeoutSeconds = 30;
  return options;
}

// One rank, its own communicator: the body's subject is the wrong call.
void withOneRankComm(const std::function<void(ncclComm_t)>& body) {
  runRanks(
      1,
      [&](RankContext& ctx) {
        Comm comm(ctx.initComm());
        body(comm.get());
        comm.destroy();
      },
      quick());
}

TEST(Errors, NullPointers) {
  withOneRankComm([](ncclComm_t comm) {
    float buffer[4] = {};
    checkInvalidArgument(
        ncclAllReduce(nullptr, buffer, 4, ncclFloat32, ncclSum, comm, nullptr),
        comm, {"sendbuff", "null"}, "all-reduce with a NULL sendbuff");
    checkInvalidArgument(
        ncclAllReduce(buffer, nullptr, 4, ncclFloat32, ncclSum, comm, nullptr),
        comm, {"recvbuff", "null"}, "all-reduce with a NULL recvbuff");
    checkInvalidArgument(
        ncclAllGather(buffer, nullptr, 4, ncclFloat32, comm, nullptr), comm,
        {"recvbuff", "null"}, "all-gather with a NULL recvbuff");
    checkInvalidArgument(ncclBcast(nullptr, 4, ncclFloat32, 0, comm, nullptr),
                         comm, {"buff", "null"}, "bcast with a NULL buffer");
    MP_CHECK_NCCL(ncclGroupStart());
    checkInvalidArgument(ncclSend(nullptr, 4, ncclFloat32, 0, comm, nullptr),
                         comm, {"sendbuff", "null", "buff"},
                         "send with a NULL buffer");
    ncclGroupEnd();
    checkInvalidArgument(ncclCommCount(comm, nullptr), comm, {"count", "null"},
                         "ncclCommCount(comm, NULL)");
    checkInvalidArgument(ncclCommUserRank(comm, nullptr), comm,
                         {"rank", "null"}, "ncclCommUserRank(comm, NULL)");
    checkInvalidArgument(ncclCommGetAsyncError(comm, nullptr), comm,
                         {"null", "error"},
                         "ncclCommGetAsyncError(comm, NULL)");
    checkInvalidArgument(ncclGetVersion(nullptr), nullptr, {"version", "null"},
                         "ncclGetVersion(NULL)");
    checkInvalidArgument(ncclGetUniqueId(nullptr), nullptr, {"id", "null"},
                         "ncclGetUniqueId(NULL)");
    float scalar = 2;
    checkInvalidArgument(
        ncclRedOpCreatePreMulSum(nullptr, &scalar, ncclFloat32,
                                 ncclScalarHostImmediate, comm),
        comm, {"op", "null"}, "ncclRedOpCreatePreMulSum(NULL op)");
    ncclRedOp_t op;
    checkInvalidArgument(
        ncclRedOpCreatePreMulSum(&op, nullptr, ncclFloat32,
                                 ncclScalarHostImmediate, comm),
        comm, {"scalar", "null"}, "ncclRedOpCreatePreMulSum(NULL scalar)");
    checkInvalidArgument(hetcclStreamCreate(nullptr), nullptr,
                         {"stream", "null"}, "hetcclStreamCreate(NULL)");
  });
}

TEST(Errors, UnknownDataTypes) {
  withOneRankComm([](ncclComm_t comm) {
    char buffer[64] = {};
    for (int type : {99, static_cast<int>(ncclNumTypes), -1}) {
      auto dtype = static_cast<ncclDataType_t>(type);
      std::string suffix = " with datatype " + std::to_string(type);
      checkInvalidArgument(
          ncclAllReduce(buffer, buffer, 4, dtype, ncclSum, comm, nullptr), comm,
          {"type"}, "all-reduce" + suffix);
      checkInvalidArgument(
          ncclAllGather(buffer, buffer, 4, dtype, comm, nullptr), comm,
          {"type"}, "all-gather" + suffix);
      checkInvalidArgument(
          ncclBroadcast(buffer, buffer, 4, dtype, 0, comm, nullptr), comm,
          {"type"}, "broadcast" + suffix);
      float scalar = 1;
      ncclRedOp_t op;
      checkInvalidArgument(
          ncclRedOpCreatePreMulSum(&op, &scalar, dtype, ncclScalarHostImmediate,
                                   comm),
          comm, {"type"}, "PreMulSum" + suffix);
    }
  });
}

TEST(Errors, UnknownAndDestroyedOps) {
  withOneRankComm([](ncclComm_t comm) {
    float buffer[4] = {};
    for (int value : {77, static_cast<int>(ncclNumOps), -3}) {
      checkInvalidArgument(
          ncclAllReduce(buffer, buffer, 4, ncclFloat32,
                        static_cast<ncclRedOp_t>(value), comm, nullptr),
          comm, {"op"}, "all-reduce with op " + std::to_string(value));
    }
    float scalar = 2;
    ncclRedOp_t op;
    MP_CHECK_NCCL(ncclRedOpCreatePreMulSum(&op, &scalar, ncclFloat32,
                                           ncclScalarHostImmediate, comm));
    MP_CHECK_NCCL(ncclRedOpDestroy(op, comm));
    checkInvalidArgument(
        ncclAllReduce(buffer, buffer, 4, ncclFloat32, op, comm, nullptr), comm,
        {"op"}, "all-reduce with a destroyed PreMulSum op");
    checkInvalidArgument(ncclRedOpDestroy(op, comm), comm, {"op"},
                         "destroying a PreMulSum op twice");
    checkInvalidArgument(ncclRedOpDestroy(ncclSum, comm), comm, {"op"},
                         "destroying the built-in ncclSum");
  });
}

TEST(Errors, RootsAndPeersOutOfRange) {
  withOneRankComm([](ncclComm_t comm) {
    float buffer[4] = {};
    for (int root : {1, -1, 1000}) {
      std::string suffix = " with root " + std::to_string(root);
      checkInvalidArgument(
          ncclBroadcast(buffer, buffer, 4, ncclFloat32, root, comm, nullptr),
          comm, {"root"}, "broadcast" + suffix);
      checkInvalidArgument(ncclReduce(buffer, buffer, 4, ncclFloat32, ncclSum,
                                      root, comm, nullptr),
                           comm, {"root"}, "reduce" + suffix);
      checkInvalidArgument(
          ncclGather(buffer, buffer, 1, ncclFloat32, root, comm, nullptr), comm,
          {"root"}, "gather" + suffix);
    }
    for (int peer : {1, -1}) {
      std::string suffix = " to peer " + std::to_string(peer);
      MP_CHECK_NCCL(ncclGroupStart());
      checkInvalidArgument(
          ncclSend(buffer, 4, ncclFloat32, peer, comm, nullptr), comm, {"peer"},
          "send" + suffix);
      checkInvalidArgument(
          ncclRecv(buffer, 4, ncclFloat32, peer, comm, nullptr), comm, {"peer"},
          "recv" + suffix);
      ncclGroupEnd();
    }
  });
}

// Counts whose byte size does not fit in size_t must be refused before any
// byte is touched (the buffers here are tiny).
TEST(Errors, CountOverflow) {
  runRanks(
      2,
      [](RankContext& ctx) {
        Comm comm(ctx.initComm());
        float buffer[4] = {};
        size_t huge = SIZE_MAX / 2;
        checkInvalidArgument(ncclAllReduce(buffer, buffer, huge, ncclFloat32,
                                           ncclSum, comm.get(), nullptr),
                             comm.get(), {"count", "overflow", "large", "size"},
                             "all-reduce of SIZE_MAX/2 floats");
        // count * 4 bytes fits; times nranks does not.
        size_t perRank = SIZE_MAX / 8 + 1;
        checkInvalidArgument(ncclAllGather(buffer, buffer, perRank, ncclFloat32,
                                           comm.get(), nullptr),
                             comm.get(), {"count", "overflow", "large", "size"},
                             "all-gather whose receive size overflows");
        checkInvalidArgument(
            ncclReduceScatter(buffer, buffer, perRank, ncclFloat32, ncclSum,
                              comm.get(), nullptr),
            comm.get(), {"count", "overflow", "large", "size"},
            "reduce-scatter whose send size overflows");
        // Still usable afterwards.
        float one = 1, two = 0;
        MP_CHECK_NCCL(ncclAllReduce(&one, &two, 1, ncclFloat32, ncclSum,
                                    comm.get(), nullptr));
        MP_CHECK(two == 2) << "sum " << two;
        comm.destroy();
      },
      quick());
}

TEST(Errors, NullCommunicator) {
  runRanks(
      1,
      [](RankContext&) {
        float buffer[4] = {};
        int value = 0;
        checkInvalidArgument(ncclAllReduce(buffer, buffer, 4, ncclFloat32,
                                           ncclSum, nullptr, nullptr),
                             nullptr, {"comm"}, "all-reduce on a NULL comm");
        checkInvalidArgument(ncclCommCount(nullptr, &value), nullptr, {"comm"},
                             "ncclCommCount(NULL)");
        checkInvalidArgument(
            ncclSend(buffer, 1, ncclFloat32, 0, nullptr, nullptr), nullptr,
            {"comm"}, "send on a NULL comm");
        ncclComm_t child = nullptr;
        checkInvalidArgument(ncclCommSplit(nullptr, 0, 0, &child, nullptr),
                             nullptr, {"comm"}, "split of a NULL comm");
      },
      quick());
}

// A handle used after ncclCommDestroy is recognised, not dereferenced.
TEST(Errors, DestroyedCommunicator) {
  runRanks(
      1,
      [](RankContext& ctx) {
        ncclComm_t comm = ctx.initComm();
        MP_CHECK_NCCL(ncclCommDestroy(comm));
        float buffer[4] = {};
        int value = 0;
        checkInvalidArgument(ncclAllReduce(buffer, buffer, 4, ncclFloat32,
                                           ncclSum, comm, nullptr),
                             nullptr, {"comm", "destroyed", "invalid"},
                             "all-reduce on a destroyed comm");
        checkInvalidArgument(ncclCommCount(comm, &value), nullptr,
                             {"comm", "destroyed", "invalid"},
                             "ncclCommCount on a destroyed comm");
        checkInvalidArgument(ncclCommDestroy(comm), nullptr,
                             {"comm", "destroyed", "invalid"},
                             "destroying a comm twice");
      },
      quick());
}

// Any changed byte of the id is caught (ncclInvalidArgument), quickly.
TEST(Errors, CorruptedUniqueId) {
  runRanks(
      1,
      [](RankContext& ctx) {
        for (int position : {0, 5, 9, 20, 40, 64, 100, 127}) {
          ncclUniqueId bad = ctx.id();
          bad.internal[position] ^= 0x5a;
          ncclComm_t comm = nullptr;
          double start = nowSeconds();
          checkInvalidArgument(
              ncclCommInitRank(&comm, 1, bad, 0), nullptr, {"id"},
              "init with id byte " + std::to_string(position) + " changed");
          MP_CHECK(nowSeconds() - start < 5) << "rejecting a corrupted id took "
                                             << nowSeconds() - start << " s";
        }
        // The intact id still works.
        Comm comm(ctx.initComm());
        comm.destroy();
      },
      quick());
}

TEST(Errors, BadRankAndRankCount) {
  runRanks(
      1,
      [](RankContext& ctx) {
        ncclComm_t comm = nullptr;
        checkInvalidArgument(ncclCommInitRank(&comm, 2, ctx.id(), 2), nullptr,
                             {"rank"}, "rank 2 of 2");
        checkInvalidArgument(ncclCommInitRank(&comm, 2, ctx.id(), -1), nullptr,
                             {"rank"}, "rank -1");
        checkInvalidArgument(ncclCommInitRank(&comm, 0, ctx.id(), 0), nullptr,
                             {"nranks", "rank"}, "nranks 0");
        checkInvalidArgument(ncclCommInitRank(&comm, -4, ctx.id(), 0), nullptr,
                             {"nranks", "rank"}, "nranks -4");
        // Rank counts above the documented maximum (2^20 = 1048576) are
        // refused before anything is allocated for them (a rank grew to
        // 2 GB before failing).
        const size_t before = residentBytes();
        const double start = nowSeconds();
        for (int nranks : {INT_MAX, INT_MAX - 1, (1 << 20) + 1})
          checkInvalidArgument(ncclCommInitRank(&comm, nranks, ctx.id(), 0),
                               nullptr,
                               {"more than the maximum of 1048576 ranks"},
                               "nranks " + std::to_string(nranks));
        std::vector<ncclComm_t> comms(1);
        checkInvalidArgument(ncclCommInitAll(comms.data(), INT_MAX, nullptr),
                             nullptr, {"ndev", "maximum"}, "ndev INT_MAX");
        MP_CHECK(nowSeconds() - start < 1) << "refusing huge rank counts took "
                                           << nowSeconds() - start << " s";
        MP_CHECK(residentBytes() < before + (16u << 20))
            << "refusing huge rank counts took "
            << (residentBytes() - before) / (1 << 20) << " MiB";
        checkInvalidArgument(ncclCommInitRank(nullptr, 1, ctx.id(), 0), nullptr,
                             {"comm", "null"}, "a NULL comm pointer");
        ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
        config.magic = 0x12345678;
        checkInvalidArgument(
            ncclCommInitRankConfig(&comm, 1, ctx.id(), 0, &config), nullptr,
            {"config", "magic", "initializer"},
            "a config without NCCL_CONFIG_INITIALIZER's magic");
        // None of that used up the id.
        Comm good(ctx.initComm());
        good.destroy();
      },
      quick());
}

// A unique id serves one communicator: used again, init fails on every
// rank within a second or two with ncclInvalidUsage and says why, rather
// than waiting out HETCCL_BOOTSTRAP_TIMEOUT with "connection refused".
TEST(Errors, UniqueIdUsedTwice) {
  RunOptions options = quick();
  options.env["HETCCL_BOOTSTRAP_TIMEOUT"] = "20";
  runRanks(
      2,
      [](RankContext& ctx) {
        Comm first(ctx.initComm());
        first.destroy();
        ctx.barrier();  // the first communicator formed on both ranks
        ncclComm_t again = nullptr;
        const double start = nowSeconds();
        checkRejected(
            ncclCommInitRank(&again, ctx.nranks(), ctx.id(), ctx.rank()),
            {ncclInvalidUsage}, nullptr,
            {"ncclUniqueId was most likely used already"},
            "init with an id used before");
        MP_CHECK(nowSeconds() - start < 3)
            << "the second use of the id failed after " << nowSeconds() - start
            << " s";
        const ncclUniqueId fresh = ctx.shareNewUniqueId();
        MP_CHECK_NCCL(
            ncclCommInitRank(&again, ctx.nranks(), fresh, ctx.rank()));
        Comm(again).destroy();
      },
      options);
}

// Two ranks with `variable`=`value` both fail init at once with
// ncclInvalidArgument and a message holding `message`; nothing is clamped
// or ignored. With the variable then set to `fixed` (null: unset) the same
// id works.
void expectParameterRefused(const char* variable, const char* value,
                            const char* message, const char* fixed) {
  RunOptions options = quick();
  options.env[variable] = value;
  runRanks(
      2,
      [&](RankContext& ctx) {
        ncclComm_t comm = nullptr;
        double start = nowSeconds();
        checkInvalidArgument(
            ncclCommInitRank(&comm, ctx.nranks(), ctx.id(), ctx.rank()),
            nullptr, {message},
            std::string("init with ") + variable + "=" + value);
        MP_CHECK(nowSeconds() - start < 5)
            << "rejecting the parameter took " << nowSeconds() - start << " s";
        if (fixed != nullptr)
          setenv(variable, fixed, 1);
        else
          unsetenv(variable);
        Comm good(ctx.initComm());
        good.destroy();
      },
      options);
}

TEST(Errors, BadEnvironmentParameter) {
  expectParameterRefused(
      "HETCCL_SHM_CHUNK", "-5",
      "HETCCL_SHM_CHUNK=\"-5\": expected a size from 4K to 1G", nullptr);
}

// The cost model's link: latency, rate and optionally the cost of each
// further transfer, all numbers.
TEST(Errors, BadLinkCostSaysWhatItExpects) {
  for (const char* value :
       {"20", "20,0", "-1,10", "fast,10", "20,10,", "20,10,-3", "20,10,3,1"})
    expectParameterRefused(
        "HETCCL_LINK_COST", value,
        "expected ALPHA_US,GBPS[,TRANSFER_US] (the link's latency in "
        "microseconds, its rate in GB/s and, optionally, what each further "
        "transfer sent at once costs in microseconds, e.g. 20,12.5 or "
        "20,12.5,3)",
        nullptr);
}

// The cost model's engine step: one number of microseconds, at least 0.
TEST(Errors, BadEngineStepSaysWhatItExpects) {
  for (const char* value : {"-1", "fast", "20us", "20,1"})
    expectParameterRefused(
        "HETCCL_ENGINE_STEP", value,
        "expected the engine's cost per hop across domains in microseconds "
        "(a number of at least 0, e.g. 150), or unset to time it at init",
        nullptr);
}

// HETCCL_TRANSPORT is checked against the transport registry at every
// init, and an empty value means auto.
TEST(Errors, UnknownTransportNamesTheRegisteredOnes) {
  expectParameterRefused("HETCCL_TRANSPORT", "rdma",
                         "HETCCL_TRANSPORT=\"rdma\": expected auto or one of "
                         "the transports of this build (shm, tcp, ucx, net)",
                         "");
}

// Settings that shape what the ranks share (segment layouts, how messages
// are cut, thresholds) fail init on every rank when one rank differs,
// naming the variable, both values and the ranks (#29: such ranks returned
// wrong data, or send/recv hung). HETCCL_GPU_LL_MAX goes through the same
// check as the others, also on CPU ranks.
TEST(Errors, SettingsThatMustAgreeFailInitOnEveryRankWhenTheyDiffer) {
  const struct {
    const char* variable;
    const char* value;  // on rank 1; the others keep the default
    const char* message;
  } kCases[] = {
      {"HETCCL_SHM_CHUNK", "1M",
       "HETCCL_SHM_CHUNK differs: rank 0 has 524288, rank 1 has 1048576"},
      {"HETCCL_SHM_P2P_CHUNK", "1M",
       "HETCCL_SHM_P2P_CHUNK differs: rank 0 has 262144, rank 1 has 1048576"},
      {"HETCCL_SHM_DIRECT_REDUCE_MAX", "64K",
       "HETCCL_SHM_DIRECT_REDUCE_MAX differs: rank 0 has 16384, rank 1 has "
       "65536"},
      {"HETCCL_GPU_LL_MAX", "0",
       "HETCCL_GPU_LL_MAX differs: rank 0 has 65536, rank 1 has 0"},
  };
  for (const auto& c : kCases) {
    RunOptions options = quick();
    options.env[c.variable] = "";  // unset: the default
    options.rankEnv = [&](int rank) {
      std::map<std::string, std::string> env;
      if (rank == 1) env[c.variable] = c.value;
      return env;
    };
    runRanks(
        3,
        [&](RankContext& ctx) {
          ncclComm_t comm = nullptr;
          checkRejected(
              ncclCommInitRank(&comm, ctx.nranks(), ctx.id(), ctx.rank()),
              {ncclInvalidUsage}, nullptr, {c.message},
              std::string("init with ") + c.variable + " differing");
        },
        options);
  }
}

// Bytes that /dev/shm and the host's memory can still give, whichever is
// less.
uint64_t sharedMemoryRoom() {
  struct statvfs shm {};
  uint64_t room = statvfs("/dev/shm", &shm) == 0
                      ? uint64_t{shm.f_bavail} * shm.f_frsize
                      : UINT64_MAX;
  std::ifstream meminfo("/proc/meminfo");
  std::string field, unit;
  uint64_t kib = 0;
  while (meminfo >> field >> kib >> unit)
    if (field == "MemAvailable:") room = std::min(room, kib * 1024);
  return room;
}

// HETCCL_SHM_P2P_CHUNK=1G is inside its range, but with HETCCL_SHM_CHUNK=1G
// the 4 ranks of a host ask for 4 x 12 GiB of /dev/shm (#29: the OOM killer
// took 24 processes). Every rank's init fails at once, before any segment
// is created (the reservation would have failed with another message or
// not at all), naming the sizes and the variables.
TEST(Errors, SharedMemoryBeyondTheHostFailsInitBeforeAnyIsTaken) {
  constexpr uint64_t kNeeded = uint64_t{48} << 30;
  if (sharedMemoryRoom() >= kNeeded)
    GTEST_SKIP() << "this host has room for 48 GiB of shared memory (the "
                    "unit test ShmSegments.SegmentsTooLargeForTheHost... "
                    "asks for more than any host has)";
  RunOptions options = quick();
  options.env["HETCCL_SHM_CHUNK"] = "1G";
  options.env["HETCCL_SHM_P2P_CHUNK"] = "1G";
  runRanks(
      4,
      [&](RankContext& ctx) {
        ncclComm_t comm = nullptr;
        const double start = nowSeconds();
        ncclResult_t result =
            ncclCommInitRank(&comm, ctx.nranks(), ctx.id(), ctx.rank());
        checkRejected(result, {ncclSystemError}, nullptr,
                      {"the 4 rank(s) sharing this host's /dev/shm would need "
                       "48 GiB of shared memory together"},
                      "init with 1G chunks");
        const std::string message = ncclGetLastError(nullptr);
        MP_CHECK(message.find("12 GiB for HETCCL_SHM_CHUNK=1G and "
                              "HETCCL_SHM_P2P_CHUNK=1G with 4 ranks") !=
                 std::string::npos)
            << message;
        MP_CHECK(nowSeconds() - start < 5)
            << "refusing took " << nowSeconds() - start << " s";
      },
      options);
}

// A CPU rank takes host streams (or NULL) only.
TEST(Errors, ForeignAndDestroyedStreams) {
  withOneRankComm([](ncclComm_t comm) {
    float buffer[4] = {};
    auto foreign = reinterpret_cast<cudaStream_t>(uintptr_t{0x1000});
    checkRejected(
        ncclAllReduce(buffer, buffer, 4, ncclFloat32, ncclSum, comm, foreign),
        {ncclInvalidArgument, ncclInvalidUsage}, comm, {"stream"},
        "all-reduce on a stream that is not a host stream");
    cudaStream_t stream = nullptr;
    MP_CHECK_NCCL(hetcclStreamCreate(&stream));
    MP_CHECK_NCCL(hetcclStreamDestroy(stream));
    checkRejected(
        ncclAllReduce(buffer, buffer, 4, ncclFloat32, ncclSum, comm, stream),
        {ncclInvalidArgument, ncclInvalidUsage}, comm, {"stream"},
        "all-reduce on a destroyed host stream");
    checkRejected(hetcclStreamSynchronize(foreign),
                  {ncclInvalidArgument, ncclInvalidUsage}, nullptr, {"stream"},
                  "hetcclStreamSynchronize of a foreign stream");
    checkRejected(hetcclStreamDestroy(stream),
                  {ncclInvalidArgument, ncclInvalidUsage}, nullptr, {"stream"},
                  "destroying a host stream twice");
  });
}

TEST(Errors, GroupEndWithoutStart) {
  runRanks(
      1,
      [](RankContext&) {
        checkRejected(ncclGroupEnd(), {ncclInvalidUsage}, nullptr, {"group"},
                      "ncclGroupEnd without ncclGroupStart");
      },
      quick());
}

// A call that fails inside a group fails the group's end, which issues
// none of the group (as NCCL's groups do): the well-formed all-reduce
// beside it leaves its output as it was. The next group starts clean.
TEST(Errors, ACallThatFailsInAGroupFailsTheWholeGroup) {
  withOneRankComm([](ncclComm_t comm) {
    float send[4] = {1, 2, 3, 4};
    float recv[4] = {};
    MP_CHECK_NCCL(ncclGroupStart());
    MP_CHECK_NCCL(
        ncclAllReduce(send, recv, 4, ncclFloat32, ncclSum, comm, nullptr));
    checkInvalidArgument(
        ncclAllReduce(send, nullptr, 4, ncclFloat32, ncclSum, comm, nullptr),
        comm, {"recvbuff"}, "all-reduce with a NULL recvbuff in a group");
    checkInvalidArgument(ncclGroupEnd(), comm, {"none of its 1 operation"},
                         "the end of a group with a call that failed");
    // NULL streams: a group that ran has ended when its end returns.
    for (float value : recv)
      MP_CHECK(value == 0) << "the group's well-formed all-reduce ran";
    MP_CHECK_NCCL(ncclGroupStart());
    MP_CHECK_NCCL(
        ncclAllReduce(send, recv, 4, ncclFloat32, ncclSum, comm, nullptr));
    MP_CHECK_NCCL(ncclGroupEnd());
    MP_CHECK(recv[0] == 1 && recv[3] == 4) << "the next group did not run";
  });
}

TEST(Errors, ErrorStringsForEveryCode) {
  runRanks(
      1,
      [](RankContext&) {
        std::set<std::string> seen;
        for (int code = ncclSuccess; code < ncclNumResults; ++code) {
          const char* text =
              ncclGetErrorString(static_cast<ncclResult_t>(code));
          MP_CHECK(text != nullptr && text[0] != '\0') << "code " << code;
          MP_CHECK(seen.insert(text).second)
              << "code " << code << " shares its string \"" << text << "\"";
        }
        const char* unknown = ncclGetErrorString(static_cast<ncclResult_t>(99));
        MP_CHECK(unknown != nullptr && unknown[0] != '\0') << "code 99";
      },
      quick());
}

// Device-side features have no meaning for a CPU rank: a clear refusal.
TEST(Errors, DeviceFeaturesOnCpuRanks) {
  withOneRankComm([](ncclComm_t comm) {
    std::vector<char> buffer(1 << 16);
    ncclWindow_t window = nullptr;
    checkRejected(ncclCommWindowRegister(comm, buffer.data(), buffer.size(),
                                         &window, NCCL_WIN_DEFAULT),
                  {ncclInvalidUsage}, comm, {"window", "cpu", "host"},
                  "ncclCommWindowRegister on a CPU rank");
    // The device API's structs are opaque here; the call must refuse before
    // looking at them.
    alignas(64) unsigned char requirements[512] = {};
    alignas(64) unsigned char devComm[4096] = {};
    checkRejected(
        ncclDevCommCreate(
            comm,
            reinterpret_cast<const ncclDevCommRequirements*>(requirements),
            reinterpret_cast<ncclDevComm*>(devComm)),
        {ncclInvalidUsage}, comm, {"device", "cpu", "host"},
        "ncclDevCommCreate on a CPU rank");
    int device = -7;
    checkRejected(ncclCommCuDevice(comm, &device), {ncclInvalidUsage}, comm,
                  {"device", "cpu", "host", "cuda"},
                  "ncclCommCuDevice on a CPU rank");
  });
}

}  // namespace
}  // namespace hetccl::mp
