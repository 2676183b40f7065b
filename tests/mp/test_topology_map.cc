// The communicator's map (hetcclCommTopology, and rank 0's INFO log at
// init) in real processes: every rank gets the same text, which names the
// hosts, the domains with their devices and back-ends, and the transport of
// every pair of domains, as the layout was forced.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "harness/check.h"
#include "harness/files_and_commands.h"
#include "harness/nccl_handles.h"
#include "harness/run_ranks.h"
#include "hetccl.h"

namespace hetccl::mp {
namespace {

std::string hostName() {
  char name[64] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

// What an extension of hetcclCommTopology's kind writes.
std::string textOf(decltype(&hetcclCommTopology) extension, ncclComm_t comm) {
  size_t needed = 0;
  MP_CHECK_NCCL(extension(comm, nullptr, 0, &needed));
  std::string text(needed, '\0');
  MP_CHECK_NCCL(extension(comm, text.data(), text.size(), &needed));
  MP_CHECK(needed == text.size()) << "the needed size changed";
  text.resize(needed - 1);
  return text;
}

std::string topologyOf(ncclComm_t comm) {
  return textOf(hetcclCommTopology, comm);
}

std::string lines(const std::vector<std::string>& each) {
  std::string text;
  for (const std::string& line : each)
    text += (text.empty() ? "" : "\n") + line;
  return text;
}

struct MapCase {
  const char* name;
  int nranks;
  std::map<std::string, std::string> env;
  std::vector<std::string> expected;  // "%h" stands for the host name
};

std::string withHost(std::string line) {
  const std::string host = hostName();
  for (size_t at; (at = line.find("%h")) != std::string::npos;)
    line.replace(at, 2, host);
  return line;
}

std::vector<MapCase> mapCases() {
  return {
      {"OneDomain",
       2,
       {},
       {"2 ranks, 1 domain, 1 host", "host 0 (%h): ranks 0-1",
        "domain 0: ranks 0-1 on host 0, CPU, host collectives"}},
      {"CpuDomainsOnTwoPretendHosts",
       4,
       {{"HETCCL_DOMAINS", "0,0,1,1"}, {"HETCCL_HOSTID", "A,A,B,B"}},
       {"4 ranks, 2 domains, 2 hosts", "host 0 (%h): ranks 0-1",
        "host 1 (%h): ranks 2-3",
        "domain 0: ranks 0-1 on host 0, CPU, host collectives",
        "domain 1: ranks 2-3 on host 1, CPU, host collectives",
        "domains 0 and 1 linked by tcp (4 rank pairs)"}},
      {"EmulatedGpusUnevenOverShmAndTcp",
       4,
       {{"HETCCL_EMULATED_GPU", "1"},
        {"HETCCL_DOMAINS", "0,0,1,2"},
        {"HETCCL_HOSTID", "A,A,A,B"}},
       {"4 ranks, 3 domains, 2 hosts", "host 0 (%h): ranks 0-2",
        "host 1 (%h): rank 3",
        "domain 0: ranks 0-1 on host 0, cuda GPUs 0,0, host collectives",
        "domain 1: rank 2 on host 0, cuda GPU 0, host collectives",
        "domain 2: rank 3 on host 1, cuda GPU 0, host collectives",
        "domains 0 and 1 linked by shm (2 rank pairs)",
        "domains 0 and 2 linked by tcp (2 rank pairs)",
        "domains 1 and 2 linked by tcp (1 rank pair)"}},
      {"EmulatedGpusStreamDriven",
       2,
       {{"HETCCL_EMULATED_GPU", "1"}, {"HETCCL_DOMAINS", "split:2"}},
       {"2 ranks, 2 domains, 1 host", "host 0 (%h): ranks 0-1",
        "domain 0: rank 0 on host 0, cuda GPU 0, host collectives",
        "domain 1: rank 1 on host 0, cuda GPU 0, host collectives",
        "domains 0 and 1 linked by shm (1 rank pair)",
        "GPU ranks of this host: collectives and send/receive stream-driven "
        "through shared pinned memory (no proxy thread)"}},
      // `auto` takes the NCCL net plugin between hosts where its devices
      // are not plain sockets, and names the plugin and its devices.
      {"CpuDomainsOverTheNetPluginAutoChose",
       4,
       {{"HETCCL_DOMAINS", "0,0,1,1"},
        {"HETCCL_HOSTID", "A,A,B,B"},
        {"HETCCL_NET_PLUGIN", HETCCL_TEST_STANDIN_NET},
        {"HETCCL_TEST_NET_DEVICES", "2"}},
       {"4 ranks, 2 domains, 2 hosts", "host 0 (%h): ranks 0-1",
        "host 1 (%h): ranks 2-3",
        "domain 0: ranks 0-1 on host 0, CPU, host collectives",
        "domain 1: ranks 2-3 on host 1, CPU, host collectives",
        "domains 0 and 1 linked by net (4 rank pairs)",
        std::string("net here: net plugin hetccl-test (ABI v12, ") +
            HETCCL_TEST_STANDIN_NET +
            "), devices standin0 (10000 Mbps, host), standin1 (10000 Mbps, "
            "host)"}},
      // ... and leaves a plugin of plain sockets to the tcp transport.
      {"CpuDomainsWithASocketPluginStayOnTcp",
       4,
       {{"HETCCL_DOMAINS", "0,0,1,1"},
        {"HETCCL_HOSTID", "A,A,B,B"},
        {"HETCCL_NET_PLUGIN", HETCCL_TEST_STANDIN_NET},
        {"HETCCL_TEST_NET_NAME", "lo"}},
       {"4 ranks, 2 domains, 2 hosts", "host 0 (%h): ranks 0-1",
        "host 1 (%h): ranks 2-3",
        "domain 0: ranks 0-1 on host 0, CPU, host collectives",
        "domain 1: ranks 2-3 on host 1, CPU, host collectives",
        "domains 0 and 1 linked by tcp (4 rank pairs)"}},
  };
}

class TopologyMapTest : public ::testing::TestWithParam<MapCase> {};

TEST_P(TopologyMapTest, EveryRankGetsTheMapOfWhatWasBuilt) {
  const MapCase& c = GetParam();
  std::vector<std::string> expected;
  for (const std::string& line : c.expected) expected.push_back(withHost(line));
  RunOptions options;
  options.env = c.env;
  runRanks(
      c.nranks,
      [&](RankContext& ctx) {
        Comm comm(ctx.initComm());
        const std::string map = topologyOf(comm.get());
        MP_CHECK(map == lines(expected)) << "rank " << ctx.rank() << "'s map:\n"
                                         << map << "\nexpected:\n"
                                         << lines(expected);
        comm.destroy();
      },
      options);
}

INSTANTIATE_TEST_SUITE_P(Mp, TopologyMapTest, ::testing::ValuesIn(mapCases()),
                         [](const auto& info) { return info.param.name; });

TEST(TopologyMap, ShortBufferIsCutAndSaysTheSizeNeeded) {
  runRanks(2, [](RankContext& ctx) {
    Comm comm(ctx.initComm());
    const std::string whole = topologyOf(comm.get());
    char cut[8];
    size_t needed = 0;
    MP_CHECK_NCCL(hetcclCommTopology(comm.get(), cut, sizeof(cut), &needed));
    MP_CHECK(needed == whole.size() + 1) << needed;
    MP_CHECK(std::string(cut) == whole.substr(0, sizeof(cut) - 1)) << cut;
    comm.destroy();
  });
}

// hetcclCommDomainLibrary: CPU ranks in one domain and GPU ranks emulated
// on the host in two both run their domains on HetCCL's host collectives;
// it is written as the map is.
TEST(TopologyMap, TheDomainLibraryIsHetcclsOwnHere) {
  for (const char* emulatedGpu : {"0", "1"}) {
    RunOptions options;
    options.env = {
        {"HETCCL_DOMAINS", *emulatedGpu == '1' ? "0,0,1,1" : "0,0,0,0"},
        {"HETCCL_EMULATED_GPU", emulatedGpu}};
    runRanks(
        4,
        [](RankContext& ctx) {
          Comm comm(ctx.initComm());
          const std::string library =
              textOf(hetcclCommDomainLibrary, comm.get());
          MP_CHECK(library.rfind("HetCCL's host collectives ", 0) == 0)
              << "rank " << ctx.rank() << ": " << library;
          size_t needed = 0;
          MP_CHECK_RESULT(
              ncclInvalidArgument,
              hetcclCommDomainLibrary(comm.get(), nullptr, 4, &needed));
          comm.destroy();
        },
        options);
  }
}

// hetcclCommGpuBuffers: each GPU rank says, per other domain, where its
// buffers go and why; a CPU rank says nothing.
struct GpuBuffersCase {
  const char* name;
  int nranks;
  std::map<std::string, std::string> env;
  std::vector<std::string> expected;  // by rank
};

constexpr const char* kStaged =
    "staged through host memory (the transport carries host memory only)";

std::vector<GpuBuffersCase> gpuBuffersCases() {
  const std::string staged = kStaged;
  return {
      {"CpuRanks", 2, {{"HETCCL_DOMAINS", "split:2"}}, {"", ""}},
      {"EmulatedGpusUnevenOverShmAndTcp",
       4,
       {{"HETCCL_EMULATED_GPU", "1"},
        {"HETCCL_DOMAINS", "0,0,1,2"},
        {"HETCCL_HOSTID", "A,A,A,B"}},
       {"domain 1: shm, " + staged + "\ndomain 2: tcp, " + staged,
        "domain 1: shm, " + staged + "\ndomain 2: tcp, " + staged,
        "domain 0: shm, " + staged + "\ndomain 2: tcp, " + staged,
        "domain 0: tcp, " + staged + "\ndomain 1: tcp, " + staged}},
      {"EmulatedGpusStreamDriven",
       2,
       {{"HETCCL_EMULATED_GPU", "1"}, {"HETCCL_DOMAINS", "split:2"}},
       {"domain 1: through pinned host memory on this host, written and read "
        "by the GPUs' own streams (stream-driven, no proxy)",
        "domain 0: through pinned host memory on this host, written and read "
        "by the GPUs' own streams (stream-driven, no proxy)"}},
      {"EmulatedGpusInOneDomain", 2, {{"HETCCL_EMULATED_GPU", "1"}}, {"", ""}},
  };
}

class GpuBuffersTest : public ::testing::TestWithParam<GpuBuffersCase> {};

TEST_P(GpuBuffersTest, EachGpuRankSaysWhereItsBuffersGo) {
  const GpuBuffersCase& c = GetParam();
  RunOptions options;
  options.env = c.env;
  runRanks(
      c.nranks,
      [&](RankContext& ctx) {
        Comm comm(ctx.initComm());
        const std::string paths = textOf(hetcclCommGpuBuffers, comm.get());
        MP_CHECK(paths == c.expected[ctx.rank()])
            << "rank " << ctx.rank() << ":\n"
            << paths << "\nexpected:\n"
            << c.expected[ctx.rank()];
        comm.destroy();
      },
      options);
}

INSTANTIATE_TEST_SUITE_P(Mp, GpuBuffersTest,
                         ::testing::ValuesIn(gpuBuffersCases()),
                         [](const auto& info) { return info.param.name; });

TEST(TopologyMap, BadArgumentsAreRefused) {
  runRanks(2, [](RankContext& ctx) {
    Comm comm(ctx.initComm());
    char text[8];
    size_t needed = 0;
    MP_CHECK_RESULT(
        ncclInvalidArgument,
        hetcclCommTopology(comm.get(), text, sizeof(text), nullptr));
    MP_CHECK_RESULT(ncclInvalidArgument,
                    hetcclCommTopology(comm.get(), nullptr, 4, &needed));
    MP_CHECK(std::string(ncclGetLastError(comm.get())).find("text is NULL") !=
             std::string::npos)
        << ncclGetLastError(comm.get());
    MP_CHECK_RESULT(ncclInvalidArgument,
                    hetcclCommTopology(nullptr, text, sizeof(text), &needed));
    comm.destroy();
  });
}

TEST(TopologyMap, RankZeroLogsItAtInfo) {
  const std::string prefix =
      "/tmp/hetccl-topology-" + std::to_string(getpid()) + "-rank";
  RunOptions options;
  options.env = {{"HETCCL_DOMAINS", "0,0,1,1"},
                 {"HETCCL_HOSTID", "A,A,B,B"},
                 {"HETCCL_DEBUG", "INFO"},
                 {"HETCCL_DEBUG_SUBSYS", "INIT"}};
  options.rankEnv = [&](int rank) {
    return std::map<std::string, std::string>{
        {"HETCCL_DEBUG_FILE", prefix + std::to_string(rank)}};
  };
  runRanks(
      4,
      [&](RankContext& ctx) {
        Comm comm(ctx.initComm());
        comm.destroy();
        const std::string path = prefix + std::to_string(ctx.rank());
        const std::string log = readFile(path);
        ::unlink(path.c_str());
        const bool mapped =
            log.find(
                "topology: domains 0 and 1 linked by tcp (4 rank pairs)") !=
            std::string::npos;
        MP_CHECK(mapped == (ctx.rank() == 0))
            << "rank " << ctx.rank()
            << (mapped ? " logged the map (only rank 0 should)"
                       : " did not log the map")
            << ":\n"
            << log;
      },
      options);
}

}  // namespace
}  // namespace hetccl::mp
