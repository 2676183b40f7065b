// The bytes that cross between domains are the expensive ones: each
// collective must move no more than its minimum across domains, spread over
// the ranks of each domain (hetcclCommCrossDomainBytes counts them).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "harness/check.h"
#include "harness/collective_case.h"
#include "harness/domains.h"
#include "harness/nccl_handles.h"
#include "harness/run_ranks.h"
#include "harness/test_params.h"
#include "hetccl.h"

namespace hetccl::mp {
namespace {

constexpr size_t kElementBytes = 4;  // float32
// Room for rounding the shards of odd counts, and nothing more.
constexpr double kRelativeSlack = 0.02;
constexpr size_t kAbsoluteSlackBytes = 256;
// How far one rank may carry more than its domain's average share.
constexpr double kSpreadFactor = 1.5;

struct RankTraffic {
  size_t sent = 0;
  size_t received = 0;
};

RankTraffic crossDomainBytes(ncclComm_t comm) {
  RankTraffic traffic;
  MP_CHECK_NCCL(
      hetcclCommCrossDomainBytes(comm, &traffic.sent, &traffic.received));
  return traffic;
}

// The most a domain may send and receive across domains for one call.
struct DomainBudget {
  double sent;
  double received;
};

// Minimal cross-domain bytes for one collective, for the domain holding
// `members` of `nranks` ranks among `ndomains` domains, root in
// `rootDomain`. `count` is NCCL's count argument.
DomainBudget minimalTraffic(Collective collective, size_t count, int nranks,
                            int members, int ndomains, bool hasTheRoot) {
  double block = static_cast<double>(count * kElementBytes);
  double others = nranks - members;
  double d = ndomains;
  switch (collective) {
    case Collective::kAllReduce:
      // Reduce-scatter then all-gather across domains.
      return {2 * (d - 1) / d * block, 2 * (d - 1) / d * block};
    case Collective::kAllGather:
      // This domain's blocks go once to each other domain.
      return {(d - 1) * members * block, others * block};
    case Collective::kReduceScatter:
      // Partial sums of the other domains' blocks leave; of ours arrive.
      return {others * block, (d - 1) * members * block};
    case Collective::kBroadcast:
    case Collective::kBcast:
      return {hasTheRoot ? (d - 1) * block : block, hasTheRoot ? 0 : block};
    case Collective::kReduce:
      return {hasTheRoot ? 0 : block, hasTheRoot ? (d - 1) * block : block};
    case Collective::kAlltoAll:
      return {members * others * block, members * others * block};
    case Collective::kGather:
      return {hasTheRoot ? 0 : members * block,
              hasTheRoot ? others * block : 0};
    case Collective::kScatter:
      return {hasTheRoot ? others * block : 0,
              hasTheRoot ? 0 : members * block};
  }
  return {0, 0};
}

double allowed(double minimum) {
  return minimum * (1 + kRelativeSlack) + kAbsoluteSlackBytes;
}

// Sums every rank's traffic by domain label and checks the totals against
// the minimum and each rank against its domain's average.
void checkTraffic(RankContext& ctx, const DomainLayout& layout,
                  Collective collective, size_t count, int root,
                  const RankTraffic& mine) {
  std::string blob(reinterpret_cast<const char*>(&mine), sizeof(mine));
  std::vector<std::string> all = ctx.exchange(blob);
  std::map<int, RankTraffic> byDomain;
  std::map<int, int> members;
  for (int r = 0; r < ctx.nranks(); ++r) {
    RankTraffic traffic;
    std::memcpy(&traffic, all[r].data(), sizeof(traffic));
    int label = layout.labels[r];
    byDomain[label].sent += traffic.sent;
    byDomain[label].received += traffic.received;
    members[label] += 1;
  }
  int myLabel = layout.labels[ctx.rank()];
  std::string what = std::string(collectiveName(collective)) + " of " +
                     std::to_string(count) + " floats, domains " +
                     layout.spec() + ", domain label " +
                     std::to_string(myLabel);
  DomainBudget budget =
      minimalTraffic(collective, count, ctx.nranks(), members[myLabel],
                     layout.count(), layout.labels[root] == myLabel);
  const RankTraffic& domain = byDomain[myLabel];
  MP_CHECK(domain.sent <= allowed(budget.sent))
      << what << ": the domain sent " << domain.sent
      << " bytes across domains; the minimum is " << budget.sent;
  MP_CHECK(domain.received <= allowed(budget.received))
      << what << ": the domain received " << domain.received
      << " bytes across domains; the minimum is " << budget.received;
  // A scatter's blocks start at the root and go straight to their ranks;
  // everything else is spread over the ranks of each domain.
  if (collective == Collective::kScatter) return;
  double fairSent = static_cast<double>(domain.sent) / members[myLabel];
  MP_CHECK(mine.sent <= kSpreadFactor * fairSent + kAbsoluteSlackBytes)
      << what << ": this rank sent " << mine.sent << " of its domain's "
      << domain.sent << " bytes (" << members[myLabel] << " ranks)";
}

class TrafficTest : public ::testing::TestWithParam<CollectiveParam> {};

TEST_P(TrafficTest, NoMoreThanTheMinimumAcrossDomains) {
  CollectiveParam param = GetParam();
  RunOptions options;
  param.domains.applyTo(&options);
  // The pipelined plans are the subject: a one-shot plan moves more by
  // design (a buffer per rank of another domain), and the cost model
  // would choose it for some of these sizes.
  options.env["HETCCL_ONE_SHOT_MAX"] = "32K";
  runRanks(
      param.nranks,
      [&](RankContext& ctx) {
        Comm comm(ctx.initComm());
        checkDomainCount(comm.get(), param.domains.count());
        MP_CHECK(crossDomainBytes(comm.get()).sent == 0) << "before any call";
        CollectiveCase c;
        c.collective = param.collective;
        c.type = ncclFloat32;
        c.count = isReducing(param.collective) ||
                          param.collective == Collective::kBroadcast ||
                          param.collective == Collective::kBcast
                      ? 100003
                      : 10007;
        c.root = 0;
        c.seed = 77;
        RankTraffic before = crossDomainBytes(comm.get());
        CollectiveRun run(c, comm.get(), ctx.rank(), ctx.nranks());
        MP_CHECK_NCCL(run.issue(nullptr)) << c.describe();
        std::string problem = run.verify();
        MP_CHECK(problem.empty()) << c.describe() << ": " << problem;
        RankTraffic after = crossDomainBytes(comm.get());
        RankTraffic delta{after.sent - before.sent,
                          after.received - before.received};
        checkTraffic(ctx, param.domains, c.collective, c.count, c.root, delta);
        comm.destroy();
      },
      options);
}

std::vector<CollectiveParam> trafficParams() {
  std::vector<CollectiveParam> params;
  for (Collective collective : allCollectives()) {
    params.push_back({2, collective, domainsByLabel({0, 1})});
    params.push_back({4, collective, domainsByLabel({0, 1, 1, 1})});
    params.push_back({4, collective, domainsByLabel({0, 1, 0, 1})});
    params.push_back({6, collective, domainsByLabel({0, 1, 2, 2, 1, 0})});
  }
  return params;
}

INSTANTIATE_TEST_SUITE_P(
    Mp, TrafficTest, ::testing::ValuesIn(trafficParams()),
    [](const ::testing::TestParamInfo<CollectiveParam>& info) {
      return info.param.name();
    });

// One domain: nothing crosses.
TEST(Traffic, NothingCrossesInOneDomain) {
  runRanks(3, [](RankContext& ctx) {
    Comm comm(ctx.initComm());
    std::vector<float> data(4099, 1.0f);
    MP_CHECK_NCCL(ncclAllReduce(data.data(), data.data(), data.size(),
                                ncclFloat32, ncclSum, comm.get(), nullptr));
    RankTraffic traffic = crossDomainBytes(comm.get());
    MP_CHECK(traffic.sent == 0 && traffic.received == 0)
        << traffic.sent << " bytes sent, " << traffic.received
        << " received across domains with one domain";
    comm.destroy();
  });
}

// Point-to-point: exactly the payload of messages between domains.
TEST(Traffic, SendRecvCountsExactlyThePayload) {
  RunOptions options;
  DomainLayout layout = domainsByLabel({0, 0, 1, 1});
  layout.applyTo(&options);
  runRanks(
      4,
      [&](RankContext& ctx) {
        Comm comm(ctx.initComm());
        checkDomainCount(comm.get(), 2);
        int next = (ctx.rank() + 1) % ctx.nranks();
        int previous = (ctx.rank() + ctx.nranks() - 1) % ctx.nranks();
        size_t count = 12345 + ctx.rank();
        size_t previousCount = 12345 + previous;
        std::vector<float> out(count, 1.0f), in(previousCount, 0.0f);
        MP_CHECK_NCCL(ncclGroupStart());
        MP_CHECK_NCCL(ncclSend(out.data(), count, ncclFloat32, next, comm.get(),
                               nullptr));
        MP_CHECK_NCCL(ncclRecv(in.data(), previousCount, ncclFloat32, previous,
                               comm.get(), nullptr));
        MP_CHECK_NCCL(ncclGroupEnd());
        for (float value : in) MP_CHECK(value == 1.0f) << "received " << value;
        RankTraffic traffic = crossDomainBytes(comm.get());
        bool sendCrosses = layout.labels[next] != layout.labels[ctx.rank()];
        bool recvCrosses = layout.labels[previous] != layout.labels[ctx.rank()];
        size_t expectedSent = sendCrosses ? count * 4 : 0;
        size_t expectedReceived = recvCrosses ? previousCount * 4 : 0;
        MP_CHECK(traffic.sent == expectedSent)
            << "sent " << traffic.sent << " bytes across, expected "
            << expectedSent;
        MP_CHECK(traffic.received == expectedReceived)
            << "received " << traffic.received << " bytes across, expected "
            << expectedReceived;
        comm.destroy();
      },
      options);
}

}  // namespace
}  // namespace hetccl::mp
