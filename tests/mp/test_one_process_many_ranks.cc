// One process driving several ranks, as NCCL documents for one process
// with several devices: ncclCommInitAll, then every collective issued over
// all the communicators inside one group from one thread (on host streams
// and on the NULL stream), send/receive posted in a different order for
// every rank inside one group, and one thread per rank. In one domain and
// in two (HETCCL_DOMAINS applies to the ranks of the process by index).
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "harness/check.h"
#include "harness/collective_case.h"
#include "harness/data.h"
#include "harness/domains.h"
#include "harness/guarded_buffer.h"
#include "harness/nccl_handles.h"
#include "harness/run_ranks.h"
#include "hetccl.h"

namespace hetccl::mp {
namespace {

constexpr int kRanks = 4;

struct InProcessRanks {
  std::vector<ncclComm_t> comms;

  InProcessRanks() : comms(kRanks, nullptr) {
    MP_CHECK_NCCL(ncclCommInitAll(comms.data(), kRanks, nullptr));
  }
  ~InProcessRanks() {
    for (ncclComm_t comm : comms) Comm(comm).destroy();
  }
  InProcessRanks(const InProcessRanks&) = delete;
  InProcessRanks& operator=(const InProcessRanks&) = delete;
};

RunOptions oneProcess(const DomainLayout& layout) {
  RunOptions options;
  options.createUniqueId = false;
  options.timeoutSeconds = 120;
  layout.applyTo(&options);
  return options;
}

CollectiveCase caseFor(Collective collective, size_t index, bool onStream) {
  static const ncclDataType_t kTypes[] = {ncclFloat32, ncclBfloat16, ncclInt8,
                                          ncclFloat8e4m3, ncclFloat64};
  static const TestOp kOps[] = {TestOp::kSum, TestOp::kMax, TestOp::kAvg,
                                TestOp::kPreMulSumHost, TestOp::kProd};
  CollectiveCase c;
  c.collective = collective;
  c.type = kTypes[index % 5];
  c.op = kOps[index % 5];
  c.count = 1 + 997 * index % 5000;  // odd counts, up to thousands
  c.inPlace = supportsInPlace(collective) && index % 2 == 1;
  c.root = static_cast<int>(index % kRanks);
  c.onStream = onStream;
  c.seed = 500 + index;
  return c;
}

class OneProcess : public ::testing::TestWithParam<DomainLayout> {};

// Every collective, in and out of place, issued for all four ranks inside
// one group from one thread; on host streams, then on the NULL stream.
TEST_P(OneProcess, EveryCollectiveGroupedFromOneThread) {
  const DomainLayout layout = GetParam();
  runRanks(
      1,
      [&](RankContext&) {
        InProcessRanks ranks;
        checkDomainCount(ranks.comms[0], layout.count());
        // Without a device list, rank i runs on device i.
        for (int r = 0; r < kRanks && layout.emulatedGpus; ++r) {
          int device = -1;
          MP_CHECK_NCCL(ncclCommCuDevice(ranks.comms[r], &device));
          MP_CHECK(device == r) << "rank " << r << " is on device " << device;
        }
        std::vector<std::unique_ptr<HostStream>> streams;
        for (int r = 0; r < kRanks; ++r)
          streams.push_back(std::make_unique<HostStream>());
        size_t index = 0;
        for (bool onStream : {true, false}) {
          for (Collective collective : allCollectives()) {
            for (int variant = 0; variant < 2; ++variant, ++index) {
              const CollectiveCase c = caseFor(collective, index, onStream);
              std::vector<std::unique_ptr<CollectiveRun>> runs;
              MP_CHECK_NCCL(ncclGroupStart());
              for (int r = 0; r < kRanks; ++r) {
                runs.push_back(std::make_unique<CollectiveRun>(
                    c, ranks.comms[r], r, kRanks));
                MP_CHECK_NCCL(
                    runs.back()->issue(onStream ? streams[r]->get() : nullptr))
                    << c.describe();
              }
              MP_CHECK_NCCL(ncclGroupEnd()) << c.describe();
              for (int r = 0; r < kRanks; ++r) {
                if (onStream) streams[r]->synchronize();
                const std::string problem = runs[r]->verify();
                MP_CHECK(problem.empty())
                    << "rank " << r << ": " << c.describe() << ": " << problem;
                MP_CHECK(runs[r]->sharedOutputHash() ==
                         runs[0]->sharedOutputHash())
                    << "ranks 0 and " << r << " differ: " << c.describe();
              }
            }
          }
        }
      },
      oneProcess(layout));
}

// Every rank sends a message to every rank (itself included) and receives
// one from each, all in one group, each rank's calls in its own shuffled
// order, and the ranks' calls interleaved at random.
TEST_P(OneProcess, SendReceiveInShuffledOrdersInOneGroup) {
  const DomainLayout layout = GetParam();
  runRanks(
      1,
      [&](RankContext&) {
        InProcessRanks ranks;
        std::mt19937 random(7);
        for (int round = 0; round < 4; ++round) {
          struct Call {
            int rank, peer;
            bool send;
          };
          std::vector<std::vector<Call>> perRank(kRanks);
          for (int r = 0; r < kRanks; ++r) {
            for (int peer = 0; peer < kRanks; ++peer) {
              perRank[r].push_back({r, peer, true});
              perRank[r].push_back({r, peer, false});
            }
            std::shuffle(perRank[r].begin(), perRank[r].end(), random);
          }
          // Message (source, destination) has its own size and bytes.
          auto bytesOf = [&](int source, int destination) {
            return static_cast<size_t>(1 + 4099 * (source + 1) *
                                               (destination + 2) * (round + 1) %
                                               300000);
          };
          const uint64_t seed = 900 + round;
          std::vector<std::vector<GuardedBuffer>> sends(kRanks), recvs(kRanks);
          for (int r = 0; r < kRanks; ++r)
            for (int peer = 0; peer < kRanks; ++peer) {
              sends[r].emplace_back(bytesOf(r, peer));
              fillPatternBytes(seed + peer, r, 0, bytesOf(r, peer),
                               sends[r].back().data());
              recvs[r].emplace_back(bytesOf(peer, r));
            }
          std::vector<size_t> next(kRanks, 0);
          MP_CHECK_NCCL(ncclGroupStart());
          for (size_t left = kRanks * 2 * kRanks; left > 0; --left) {
            int r = static_cast<int>(random() % kRanks);
            while (next[r] == perRank[r].size()) r = (r + 1) % kRanks;
            const Call call = perRank[r][next[r]++];
            if (call.send)
              MP_CHECK_NCCL(ncclSend(sends[r][call.peer].data(),
                                     bytesOf(r, call.peer), ncclUint8,
                                     call.peer, ranks.comms[r], nullptr));
            else
              MP_CHECK_NCCL(ncclRecv(recvs[r][call.peer].data(),
                                     bytesOf(call.peer, r), ncclUint8,
                                     call.peer, ranks.comms[r], nullptr));
          }
          MP_CHECK_NCCL(ncclGroupEnd()) << "round " << round;
          for (int r = 0; r < kRanks; ++r)
            for (int peer = 0; peer < kRanks; ++peer) {
              const std::string problem = checkPatternBytes(
                  seed + r, peer, 0, bytesOf(peer, r), recvs[r][peer].data());
              MP_CHECK(problem.empty())
                  << "round " << round << ": rank " << r << " from rank "
                  << peer << ": " << problem;
              MP_CHECK(recvs[r][peer].guardsIntact());
            }
        }
      },
      oneProcess(layout));
}

// One thread per rank, each issuing its own collectives (NULL stream and a
// host stream of its own) with no group: the ranks meet in the library.
TEST_P(OneProcess, AThreadPerRank) {
  const DomainLayout layout = GetParam();
  runRanks(
      1,
      [&](RankContext&) {
        InProcessRanks ranks;
        std::vector<std::string> problems(kRanks);
        std::vector<std::thread> threads;
        for (int r = 0; r < kRanks; ++r)
          threads.emplace_back([&, r] {
            HostStream stream;
            size_t index = 0;
            for (bool onStream : {false, true})
              for (Collective collective : allCollectives()) {
                const CollectiveCase c = caseFor(collective, index++, onStream);
                CollectiveRun run(c, ranks.comms[r], r, kRanks);
                MP_CHECK_NCCL(run.issue(onStream ? stream.get() : nullptr))
                    << "rank " << r << ": " << c.describe();
                if (onStream) stream.synchronize();
                const std::string problem = run.verify();
                if (!problem.empty() && problems[r].empty())
                  problems[r] = c.describe() + ": " + problem;
              }
          });
        for (std::thread& thread : threads) thread.join();
        for (int r = 0; r < kRanks; ++r)
          MP_CHECK(problems[r].empty()) << "rank " << r << ": " << problems[r];
      },
      oneProcess(layout));
}

// A device list puts rank i on devlist[i]; a device the process does not
// have is refused with ncclInvalidArgument before anything starts.
TEST(OneProcessDevices, InitAllTakesTheDeviceListAndRefusesMissingDevices) {
  RunOptions options = oneProcess(emulatedGpuDomains({0, 1}));
  runRanks(
      1,
      [](RankContext&) {
        std::vector<ncclComm_t> comms(2, nullptr);
        const int missing[] = {1, 99};
        MP_CHECK_RESULT(ncclInvalidArgument,
                        ncclCommInitAll(comms.data(), 2, missing));
        const std::string message = ncclGetLastError(nullptr);
        MP_CHECK(message.find("device 99") != std::string::npos) << message;
        const int devices[] = {3, 1};
        MP_CHECK_NCCL(ncclCommInitAll(comms.data(), 2, devices));
        for (int r = 0; r < 2; ++r) {
          int device = -1;
          MP_CHECK_NCCL(ncclCommCuDevice(comms[r], &device));
          MP_CHECK(device == devices[r]) << "rank " << r << ": " << device;
        }
        for (ncclComm_t comm : comms) Comm(comm).destroy();
      },
      options);
}

INSTANTIATE_TEST_SUITE_P(Mp, OneProcess,
                         ::testing::Values(oneDomain(),
                                           domainsByLabel({0, 0, 1, 1}),
                                           domainsByLabel({0, 1, 0, 1}),
                                           emulatedGpuDomains({0, 0, 1, 1})),
                         [](const ::testing::TestParamInfo<DomainLayout>& i) {
                           return i.param.name();
                         });

}  // namespace
}  // namespace hetccl::mp
