// HETCCL_CHECK_CALLS=1 on communicators that HetCCL hands whole to the
// vendor library (the stand-in NCCL of fake_nccl.cc, two "GPUs" of one
// process): calls that agree reach the library and complete, whether one
// thread drives both ranks in a group or each rank has its own thread;
// calls that disagree fail on both ranks with ncclInvalidUsage naming both
// calls, within a second, before the library sees them; the communicator
// then reports the error and refuses later calls.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "fake_vendor_ranks.h"
#include "harness/check.h"
#include "harness/nccl_handles.h"
#include "harness/run_ranks.h"
#include "nccl.h"

extern "C" int cudaSetDevice(int device);

namespace hetccl::mp {
namespace {

constexpr size_t kCount = 1001;
constexpr double kPrompt = 1.0;  // seconds a disagreement may take

RunOptions checkingCalls() {
  RunOptions options;
  options.createUniqueId = false;
  options.timeoutSeconds = 60;
  options.env["HETCCL_NCCL_LIBRARY"] = FAKE_NCCL_PATH;
  options.env["HETCCL_CHECK_CALLS"] = "1";
  return options;
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

// Runs call(rank) on a thread per rank; returns each rank's result and
// how long it took.
struct Outcome {
  ncclResult_t result = ncclSuccess;
  double seconds = 0;
};
template <typename Call>
std::vector<Outcome> onThreads(Call call) {
  std::vector<Outcome> outcomes(kRanks);
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r)
    threads.emplace_back([&, r] {
      cudaSetDevice(r);
      const auto start = std::chrono::steady_clock::now();
      outcomes[r].result = call(r);
      outcomes[r].seconds = secondsSince(start);
    });
  for (std::thread& thread : threads) thread.join();
  return outcomes;
}

// Every rank failed promptly with ncclInvalidUsage and `expected` in its
// message; its communicator reports the error and refuses the next call.
void expectCaught(const Ranks& ranks, const std::vector<Outcome>& outcomes,
                  const std::string& expected) {
  for (int r = 0; r < kRanks; ++r) {
    MP_CHECK(outcomes[r].result == ncclInvalidUsage)
        << "rank " << r << ": " << ncclGetErrorString(outcomes[r].result);
    MP_CHECK(outcomes[r].seconds < kPrompt)
        << "rank " << r << " took " << outcomes[r].seconds << " s";
    const std::string message = ncclGetLastError(ranks.comms[r]);
    MP_CHECK(message.find(expected) != std::string::npos)
        << "rank " << r << ": " << message;
    ncclResult_t async = ncclSuccess;
    MP_CHECK_NCCL(ncclCommGetAsyncError(ranks.comms[r], &async));
    MP_CHECK(async == ncclInvalidUsage) << "rank " << r << ": " << async;
    std::vector<float> data(4, 1.0f);
    MP_CHECK(ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat32,
                           ncclSum, ranks.comms[r], nullptr) != ncclSuccess)
        << "rank " << r << " took a call after the disagreement";
  }
}

TEST(FakeVendorCallCheck, AgreeingCallsCompleteInAGroupFromOneThread) {
  SKIP_UNDER_ASAN();
  runRanks(
      1,
      [](RankContext&) {
        Ranks ranks;
        std::vector<std::vector<float>> data(kRanks);
        for (int round = 0; round < 3; ++round) {
          MP_CHECK_NCCL(ncclGroupStart());
          for (int r = 0; r < kRanks; ++r) {
            data[r].assign(kCount, static_cast<float>(r + round));
            MP_CHECK_NCCL(ncclAllReduce(data[r].data(), data[r].data(), kCount,
                                        ncclFloat32, ncclSum, ranks.comms[r],
                                        nullptr));
          }
          MP_CHECK_NCCL(ncclGroupEnd()) << "round " << round;
          for (int r = 0; r < kRanks; ++r)
            MP_CHECK(data[r] == std::vector<float>(kCount, 1.0f + 2 * round))
                << "round " << round << ", rank " << r << " got " << data[r][0];
        }
      },
      checkingCalls());
}

TEST(FakeVendorCallCheck, AgreeingCallsCompleteOnAThreadPerRank) {
  SKIP_UNDER_ASAN();
  runRanks(
      1,
      [](RankContext&) {
        Ranks ranks;
        std::vector<std::vector<int32_t>> data(kRanks);
        for (int round = 0; round < 3; ++round) {
          auto outcomes = onThreads([&](int r) {
            data[r].assign(kCount, r + round);
            return ncclAllReduce(data[r].data(), data[r].data(), kCount,
                                 ncclInt32, ncclSum, ranks.comms[r], nullptr);
          });
          for (int r = 0; r < kRanks; ++r) {
            MP_CHECK(outcomes[r].result == ncclSuccess)
                << "rank " << r << ": " << ncclGetLastError(ranks.comms[r]);
            MP_CHECK(data[r] == std::vector<int32_t>(kCount, 1 + 2 * round))
                << "round " << round << ", rank " << r << " got " << data[r][0];
          }
        }
      },
      checkingCalls());
}

struct Call {
  size_t count;
  ncclDataType_t type;
  ncclRedOp_t op;
};

// Rank 0 makes `first`, rank 1 `second`, each on its own thread; neither
// reaches the library (its buffer keeps its values).
void expectDisagreementCaught(Call first, Call second,
                              const std::string& expected) {
  runRanks(
      1,
      [&](RankContext&) {
        Ranks ranks;
        std::vector<std::vector<char>> data(kRanks,
                                            std::vector<char>(8 * kCount, 7));
        auto outcomes = onThreads([&](int r) {
          const Call& call = r == 0 ? first : second;
          return ncclAllReduce(data[r].data(), data[r].data(), call.count,
                               call.type, call.op, ranks.comms[r], nullptr);
        });
        expectCaught(ranks, outcomes, expected);
        for (int r = 0; r < kRanks; ++r)
          MP_CHECK(data[r] == std::vector<char>(8 * kCount, 7))
              << "rank " << r << "'s buffer changed: the call reached NCCL";
      },
      checkingCalls());
}

TEST(FakeVendorCallCheck, CountsThatDifferFailOnBothRanks) {
  SKIP_UNDER_ASAN();
  expectDisagreementCaught({1001, ncclFloat32, ncclSum},
                           {500, ncclFloat32, ncclSum},
                           "op #1: rank 0 called allReduce(1001 x float32, "
                           "sum) but rank 1 called allReduce(500 x float32, "
                           "sum)");
}

TEST(FakeVendorCallCheck, TypesOfEqualBytesThatDifferFailOnBothRanks) {
  SKIP_UNDER_ASAN();
  expectDisagreementCaught({1000, ncclFloat64, ncclSum},
                           {2000, ncclFloat32, ncclSum},
                           "rank 0 called allReduce(1000 x float64, sum) but "
                           "rank 1 called allReduce(2000 x float32, sum)");
}

TEST(FakeVendorCallCheck, ReductionsThatDifferFailOnBothRanks) {
  SKIP_UNDER_ASAN();
  expectDisagreementCaught({kCount, ncclInt32, ncclSum},
                           {kCount, ncclInt32, ncclMax},
                           "rank 0 called allReduce(1001 x int32, sum) but "
                           "rank 1 called allReduce(1001 x int32, max)");
}

// One thread, both ranks in one group: ncclGroupEnd fails, naming both.
TEST(FakeVendorCallCheck, ADisagreementInAGroupFromOneThreadFailsTheGroup) {
  SKIP_UNDER_ASAN();
  runRanks(
      1,
      [](RankContext&) {
        Ranks ranks;
        std::vector<std::vector<float>> data(kRanks,
                                             std::vector<float>(kCount, 3.0f));
        const auto start = std::chrono::steady_clock::now();
        MP_CHECK_NCCL(ncclGroupStart());
        for (int r = 0; r < kRanks; ++r)
          MP_CHECK_NCCL(ncclAllReduce(data[r].data(), data[r].data(),
                                      r == 0 ? kCount : kCount - 1, ncclFloat32,
                                      ncclSum, ranks.comms[r], nullptr));
        MP_CHECK(ncclGroupEnd() == ncclInvalidUsage);
        MP_CHECK(secondsSince(start) < kPrompt);
        const std::string message = ncclGetLastError(nullptr);
        MP_CHECK(message.find("rank 0 called allReduce(1001 x float32, sum) "
                              "but rank 1 called allReduce(1000 x float32, "
                              "sum)") != std::string::npos)
            << message;
        for (int r = 0; r < kRanks; ++r)
          MP_CHECK(data[r] == std::vector<float>(kCount, 3.0f))
              << "rank " << r << "'s buffer changed: the call reached NCCL";
      },
      checkingCalls());
}

// A send and the receive it meets, of different counts: both fail before
// the library sees either.
TEST(FakeVendorCallCheck, ASendAndItsReceiveOfDifferentCountsFailOnBothRanks) {
  SKIP_UNDER_ASAN();
  runRanks(
      1,
      [](RankContext&) {
        Ranks ranks;
        std::vector<float> buffer(kCount, 2.0f);
        std::vector<float> received(kCount, -1.0f);
        auto outcomes = onThreads([&](int r) {
          return r == 0 ? ncclSend(buffer.data(), kCount, ncclFloat32, 1,
                                   ranks.comms[0], nullptr)
                        : ncclRecv(received.data(), kCount - 1, ncclFloat32, 0,
                                   ranks.comms[1], nullptr);
        });
        expectCaught(ranks, outcomes,
                     "rank 0 called send(1001 x float32, to rank 1) but rank "
                     "1 called recv(1000 x float32, from rank 0)");
        MP_CHECK(received == std::vector<float>(kCount, -1.0f))
            << "the receive reached NCCL";
      },
      checkingCalls());
}

}  // namespace
}  // namespace hetccl::mp
