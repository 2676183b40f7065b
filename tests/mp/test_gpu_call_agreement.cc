// GPU ranks of one host, each its own domain (the stream-driven path),
// that call different collectives: every rank fails with
// ncclInvalidUsage naming both calls within a second, from the call or
// from ncclCommGetAsyncError while its stream stays blocked, instead of
// combining buffers of different meaning. Small calls take the
// low-latency kernel, large ones the pipelined path; both wait for the
// agreement.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "harness/check.h"
#include "harness/domains.h"
#include "harness/nccl_handles.h"
#include "harness/run_ranks.h"
#include "hetccl.h"

namespace hetccl::mp {
namespace {

constexpr double kDetectionSeconds = 1.0 + 1.0;  // 1 s, plus CI's slack
constexpr double kAbortSeconds = 5;

struct Call {
  enum Kind { AllReduce, Broadcast } kind = AllReduce;
  size_t count = 0;
  ncclDataType_t dtype = ncclFloat32;
  ncclRedOp_t op = ncclSum;
  int root = 0;
};

struct Disagreement {
  std::string name;
  Call rank0, rank1;
  const char* rank1Says;  // what the message must say of rank 1's call
};

std::vector<Disagreement> disagreements(size_t count) {
  Call base{Call::AllReduce, count, ncclFloat32, ncclSum, 0};
  Call half = base, dtype = base, op = base, kind = base, root = base;
  half.count = count / 2;
  dtype.dtype = ncclInt32;  // the same bytes
  op.op = ncclMax;
  kind.kind = Call::Broadcast;
  Call broadcast = base;
  broadcast.kind = Call::Broadcast;
  root = broadcast;
  root.root = 1;
  const std::string size = std::to_string(count);
  return {
      {"count" + size, base, half, "allReduce("},
      {"dtype" + size, base, dtype, "x int32, sum)"},
      {"op" + size, base, op, "x float32, max)"},
      {"kind" + size, base, kind, "broadcast("},
      {"root" + size, broadcast, root, "root 1)"},
  };
}

ncclResult_t post(const Call& call, std::vector<float>& buffer, ncclComm_t comm,
                  cudaStream_t stream) {
  if (call.kind == Call::Broadcast)
    return ncclBroadcast(buffer.data(), buffer.data(), call.count, call.dtype,
                         call.root, comm, stream);
  return ncclAllReduce(buffer.data(), buffer.data(), call.count, call.dtype,
                       call.op, comm, stream);
}

class GpuCallAgreementTest : public ::testing::TestWithParam<Disagreement> {};

TEST_P(GpuCallAgreementTest, EveryRankFailsNamingBothCalls) {
  const Disagreement& d = GetParam();
  RunOptions options;
  options.timeoutSeconds = 60;
  emulatedGpuDomains({0, 1}).applyTo(&options);
  options.env["HETCCL_TIMEOUT"] = "30";
  runRanks(
      2,
      [&](RankContext& ctx) {
        ncclComm_t comm = ctx.initComm();
        checkDomainCount(comm, 2);
        HostStream stream;
        std::vector<float> buffer(d.rank0.count, 1.0f);
        const Call& mine = ctx.rank() == 0 ? d.rank0 : d.rank1;
        const double start = nowSeconds();
        ncclResult_t error = post(mine, buffer, comm, stream.get());
        while (error == ncclSuccess &&
               nowSeconds() - start < kDetectionSeconds) {
          MP_CHECK(hetcclStreamQuery(stream.get()) == ncclInProgress)
              << d.name << ": rank " << ctx.rank()
              << "'s stream ran past calls that disagree";
          MP_CHECK_NCCL(ncclCommGetAsyncError(comm, &error));
          if (error == ncclSuccess)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        const double seconds = nowSeconds() - start;
        MP_CHECK(error == ncclInvalidUsage)
            << d.name << ": rank " << ctx.rank() << " got "
            << ncclGetErrorString(error) << " after " << seconds << " s";
        // "op #1: rank 1 called allReduce(500 x float32, sum) but rank 0
        // called allReduce(1001 x float32, sum)", from either side.
        const std::string message = ncclGetLastError(comm);
        MP_CHECK(message.find("rank 0 called") != std::string::npos &&
                 message.find("rank 1 called") != std::string::npos &&
                 message.find(d.rank1Says) != std::string::npos)
            << d.name << ": " << message;
        const double abortStart = nowSeconds();
        MP_CHECK_NCCL(ncclCommAbort(comm));
        hetcclStreamSynchronize(stream.get());
        MP_CHECK(nowSeconds() - abortStart < kAbortSeconds)
            << "abort took " << nowSeconds() - abortStart << " s";
      },
      options);
}

std::vector<Disagreement> everyDisagreement() {
  std::vector<Disagreement> all = disagreements(1001);  // low-latency kernel
  for (const Disagreement& d : disagreements(1 << 20)) all.push_back(d);
  return all;
}

INSTANTIATE_TEST_SUITE_P(
    Mp, GpuCallAgreementTest, ::testing::ValuesIn(everyDisagreement()),
    [](const ::testing::TestParamInfo<Disagreement>& info) {
      return info.param.name;
    });

}  // namespace
}  // namespace hetccl::mp
