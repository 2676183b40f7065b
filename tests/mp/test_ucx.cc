// The ucx transport's selection in real processes: without the UCX module,
// `auto` links pretend hosts over tcp and says why in a WARN, and a forced
// ucx fails init on every rank with the reason. (Collectives over UCX run
// in test_hetero_collectives.cc and peer deaths in test_faults.cc.)
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "harness/check.h"
#include "harness/files_and_commands.h"
#include "harness/nccl_handles.h"
#include "harness/quick_collectives.h"
#include "harness/run_ranks.h"
#include "hetccl.h"

namespace hetccl::mp {
namespace {

constexpr const char* kMissingModule = "/nonexistent/libhetccl-ucx.so";

// Two ranks as two domains on two pretend hosts, UCX's module missing.
RunOptions pretendHostsWithoutUcx() {
  RunOptions options;
  options.env = {{"HETCCL_DOMAINS", "0,1"},
                 {"HETCCL_HOSTID", "A,B"},
                 {"HETCCL_UCX_MODULE", kMissingModule}};
  return options;
}

TEST(Ucx, WithoutTheModuleAutoLinksHostsOverTcpAndSaysWhy) {
  const std::string logPrefix =
      "/tmp/hetccl-ucx-fallback-" + std::to_string(getpid()) + "-rank";
  RunOptions options = pretendHostsWithoutUcx();
  options.rankEnv = [&](int rank) {
    return std::map<std::string, std::string>{
        {"HETCCL_DEBUG", "INFO"},
        {"HETCCL_DEBUG_SUBSYS", "NET"},
        {"HETCCL_DEBUG_FILE", logPrefix + std::to_string(rank)}};
  };
  runRanks(
      2,
      [&](RankContext& ctx) {
        Comm comm(ctx.initComm());
        checkAllReduceSum(comm.get(), ctx.rank() + 1, 3, nullptr,
                          "over the fallback");
        comm.destroy();
        const std::string path = logPrefix + std::to_string(ctx.rank());
        const std::string log = readFile(path);
        ::unlink(path.c_str());
        MP_CHECK(log.find(std::string("WARN rank ") +
                          std::to_string(ctx.rank()) +
                          ": links to 1 rank on other hosts use tcp: UCX is "
                          "not available: cannot load " +
                          kMissingModule) != std::string::npos)
            << "no WARN line on why UCX was left out:\n"
            << log;
        MP_CHECK(log.find("tcp transport (rank " + std::to_string(ctx.rank()) +
                          "): 1 link(s)") != std::string::npos)
            << "the hosts were not linked over tcp:\n"
            << log;
      },
      options);
}

TEST(Ucx, ForcedWithoutTheModuleFailsInitOnEveryRankSayingWhy) {
  RunOptions options = pretendHostsWithoutUcx();
  options.env["HETCCL_TRANSPORT"] = "ucx";
  runRanks(
      2,
      [](RankContext& ctx) {
        ncclComm_t comm = nullptr;
        ncclResult_t result =
            ncclCommInitRank(&comm, ctx.nranks(), ctx.id(), ctx.rank());
        MP_CHECK(result == ncclSystemError) << describeResult(result);
        const std::string message = ncclGetLastError(nullptr);
        MP_CHECK(message.find("ucx transport: rank") != std::string::npos &&
                 message.find("cannot use UCX") != std::string::npos)
            << message;
        if (ctx.rank() == 0)  // each rank names itself and its reason
          MP_CHECK(message.find(kMissingModule) != std::string::npos)
              << message;
      },
      options);
}

}  // namespace
}  // namespace hetccl::mp
