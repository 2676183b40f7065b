// One process driving two "GPUs" whose communicators HetCCL hands whole to
// the vendor library: a stand-in NCCL (fake_nccl.cc) that, like NCCL,
// finishes a group only once every rank of its collectives has arrived,
// and a stand-in CUDA runtime (fake_cudart.cc) with two devices. A group
// over both communicators from one thread must reach the library as one
// group (issued one after the other, the first would wait for the second
// forever); a thread per communicator works without a group.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "fake_vendor_ranks.h"
#include "harness/check.h"
#include "harness/nccl_handles.h"
#include "harness/run_ranks.h"
#include "nccl.h"

extern "C" int cudaGetDevice(int* device);
extern "C" int cudaSetDevice(int device);

namespace hetccl::mp {
namespace {

constexpr size_t kCount = 1001;

RunOptions withFakeNccl() {
  RunOptions options;
  options.createUniqueId = false;
  options.timeoutSeconds = 60;
  options.env["HETCCL_NCCL_LIBRARY"] = FAKE_NCCL_PATH;
  return options;
}

int currentDevice() {
  int device = -1;
  cudaGetDevice(&device);
  return device;
}

TEST(FakeVendor, AGroupOverBothCommunicatorsReachesTheLibraryAsOne) {
  SKIP_UNDER_ASAN();
  runRanks(
      1,
      [](RankContext&) {
        Ranks ranks;
        for (int r = 0; r < kRanks; ++r) {
          int device = -1;
          MP_CHECK_NCCL(ncclCommCuDevice(ranks.comms[r], &device));
          MP_CHECK(device == r) << "rank " << r << " is on device " << device;
        }
        cudaSetDevice(1);
        std::vector<std::vector<float>> send(kRanks), recv(kRanks);
        for (int round = 0; round < 3; ++round) {
          MP_CHECK_NCCL(ncclGroupStart());
          for (int r = 0; r < kRanks; ++r) {
            send[r].assign(kCount, static_cast<float>(r + round));
            recv[r].assign(kCount, -1.0f);
            MP_CHECK_NCCL(ncclAllReduce(send[r].data(), recv[r].data(), kCount,
                                        ncclFloat32, ncclSum, ranks.comms[r],
                                        nullptr));
          }
          MP_CHECK_NCCL(ncclGroupEnd()) << "round " << round;
          const float expected = 1.0f + 2 * round;  // (0 + r) + (1 + r)
          for (int r = 0; r < kRanks; ++r)
            MP_CHECK(recv[r] == std::vector<float>(kCount, expected))
                << "round " << round << ", rank " << r << " got " << recv[r][0];
          MP_CHECK(currentDevice() == 1) << "the caller's device changed";
        }
      },
      withFakeNccl());
}

TEST(FakeVendor, AThreadPerCommunicatorNeedsNoGroup) {
  SKIP_UNDER_ASAN();
  runRanks(
      1,
      [](RankContext&) {
        Ranks ranks;
        std::vector<std::vector<int32_t>> data(kRanks);
        std::vector<std::thread> threads;
        for (int r = 0; r < kRanks; ++r)
          threads.emplace_back([&, r] {
            cudaSetDevice(r);
            data[r].assign(kCount, r + 5);
            MP_CHECK_NCCL(ncclAllReduce(data[r].data(), data[r].data(), kCount,
                                        ncclInt32, ncclSum, ranks.comms[r],
                                        nullptr));
          });
        for (std::thread& thread : threads) thread.join();
        for (int r = 0; r < kRanks; ++r)
          MP_CHECK(data[r] == std::vector<int32_t>(kCount, 11))
              << "rank " << r << " got " << data[r][0];
      },
      withFakeNccl());
}

// NCCL's other way to make them: ncclCommInitRank per device inside one
// group, each after making its device current.
TEST(FakeVendor, GroupedInitRankPerDevice) {
  SKIP_UNDER_ASAN();
  runRanks(
      1,
      [](RankContext&) {
        ncclUniqueId id;
        MP_CHECK_NCCL(ncclGetUniqueId(&id));
        std::vector<ncclComm_t> comms(kRanks, nullptr);
        MP_CHECK_NCCL(ncclGroupStart());
        for (int r = 0; r < kRanks; ++r) {
          cudaSetDevice(r);
          MP_CHECK_NCCL(ncclCommInitRank(&comms[r], kRanks, id, r));
        }
        MP_CHECK_NCCL(ncclGroupEnd());
        std::vector<std::vector<float>> data(kRanks);
        MP_CHECK_NCCL(ncclGroupStart());
        for (int r = 0; r < kRanks; ++r) {
          int device = -1;
          MP_CHECK_NCCL(ncclCommCuDevice(comms[r], &device));
          MP_CHECK(device == r) << "rank " << r << " is on device " << device;
          data[r].assign(kCount, 2.5f);
          MP_CHECK_NCCL(ncclAllReduce(data[r].data(), data[r].data(), kCount,
                                      ncclFloat32, ncclSum, comms[r], nullptr));
        }
        MP_CHECK_NCCL(ncclGroupEnd());
        for (int r = 0; r < kRanks; ++r)
          MP_CHECK(data[r] == std::vector<float>(kCount, 5.0f))
              << "rank " << r << " got " << data[r][0];
        for (ncclComm_t comm : comms) Comm(comm).destroy();
      },
      withFakeNccl());
}

}  // namespace
}  // namespace hetccl::mp
