#include "support/link_ranks.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <utility>

#include "algo/pieced_link.h"
#include "runtime/host/host_reduce.h"
#include "support/elapsed.h"
#include "support/expect_error.h"
#include "util/dtype.h"

namespace hetccl {

// The bytes rank `from` sends to rank `to` in its transfer `index`.
uint8_t pattern(int from, int to, int index, size_t offset) {
  uint64_t x = offset * 0x9E3779B97F4A7C15ull + from * 131 + to * 17 + index;
  return static_cast<uint8_t>(x ^ (x >> 29) ^ (x >> 47));
}

std::vector<uint8_t> makePayload(int from, int to, int index, size_t bytes) {
  std::vector<uint8_t> data(bytes);
  for (size_t i = 0; i < bytes; ++i) data[i] = pattern(from, to, index, i);
  return data;
}

// The first offset where `data` differs from what `from` sent, or -1.
long long firstMismatch(const std::vector<uint8_t>& data, int from, int to,
                        int index) {
  for (size_t i = 0; i < data.size(); ++i)
    if (data[i] != pattern(from, to, index, i))
      return static_cast<long long>(i);
  return -1;
}

namespace {

// Each rank's links, [rank][peer] (null for itself).
using RankLinks = std::vector<std::vector<std::shared_ptr<Link>>>;

RankLinks linksOf(const std::vector<LinkSet*>& sets) {
  const int nranks = static_cast<int>(sets.size());
  RankLinks links(nranks, std::vector<std::shared_ptr<Link>>(nranks));
  for (int r = 0; r < nranks; ++r)
    for (int p = 0; p < nranks; ++p)
      if (p != r) links[r][p] = sets[r]->link(p);
  return links;
}

void exchangeOver(const RankLinks& links, const std::vector<size_t>& sizes,
                  Completion completion) {
  const int nranks = static_cast<int>(links.size());
  size_t total = 0;
  for (size_t s : sizes) total += s;
  std::vector<std::vector<size_t>> sentBefore(nranks), receivedBefore(nranks);
  for (int r = 0; r < nranks; ++r)
    for (int p = 0; p < nranks; ++p) {
      if (p == r) continue;
      const auto& link = links[r][p];
      sentBefore[r].push_back(link->bytesSent());
      receivedBefore[r].push_back(link->bytesReceived());
    }
  runRanks(nranks, [&](int r) {
    struct Posted {
      int peer;
      int index;
      std::shared_ptr<TransferRequest> request;
    };
    std::vector<std::vector<uint8_t>> outgoing, incoming;
    std::vector<Posted> sends, recvs;
    outgoing.reserve(sizes.size() * nranks);
    incoming.reserve(sizes.size() * nranks);
    for (int p = 0; p < nranks; ++p) {
      if (p == r) continue;
      const auto& link = links[r][p];
      EXPECT_EQ(link->peer(), p);
      for (size_t i = 0; i < sizes.size(); ++i) {
        int index = static_cast<int>(i);
        outgoing.push_back(makePayload(r, p, index, sizes[i]));
        sends.push_back(
            {p, index,
             link->send(outgoing.back().data(), sizes[i], kTestCall)});
        incoming.emplace_back(sizes[i], 0xEE);
        recvs.push_back(
            {p, index,
             link->recv(incoming.back().data(), sizes[i], kTestCall)});
      }
    }
    // Last posted first: transfers on a link are matched in posting
    // order, but the lanes of a link may finish them in any order.
    for (const auto* list : {&sends, &recvs}) {
      for (size_t i = list->size(); i-- > 0;) {
        const Posted& posted = (*list)[i];
        posted.request->wait(AbortSignal(), kLinkWaitSeconds);
        if (completion != Completion::kInPostingOrder) continue;
        for (size_t j = 0; j < i; ++j) {
          if ((*list)[j].peer != posted.peer) continue;
          EXPECT_TRUE((*list)[j].request->done())
              << "rank " << r << ": transfer " << j
              << " not complete after the later transfer " << i;
        }
      }
    }
    for (size_t i = 0; i < recvs.size(); ++i)
      EXPECT_EQ(firstMismatch(incoming[i], recvs[i].peer, r, recvs[i].index),
                -1)
          << "rank " << r << " from rank " << recvs[i].peer << ", transfer "
          << recvs[i].index << " of " << incoming[i].size() << " bytes";
  });
  for (int r = 0; r < nranks; ++r) {
    size_t k = 0;
    for (int p = 0; p < nranks; ++p) {
      if (p == r) continue;
      const auto& link = links[r][p];
      EXPECT_EQ(link->bytesSent() - sentBefore[r][k], total);
      EXPECT_EQ(link->bytesReceived() - receivedBefore[r][k], total);
      ++k;
    }
  }
}

}  // namespace

void exchangeAll(const std::vector<LinkSet*>& sets,
                 const std::vector<size_t>& sizes, Completion completion) {
  exchangeOver(linksOf(sets), sizes, completion);
}

void exchangeAllInPieces(const std::vector<LinkSet*>& sets,
                         const std::vector<size_t>& sizes, size_t pieceBytes) {
  RankLinks links = linksOf(sets);
  for (auto& row : links)
    for (auto& link : row)
      if (link) link = std::make_shared<PiecedLink>(link, pieceBytes);
  exchangeOver(links, sizes, Completion::kAnyOrder);
}

namespace {

// Raises `signal` 100 ms from now; the error of `request`'s wait must
// follow within 0.2 s and carry `code` and `reason`.
void expectRaisingEndsWait(TransferRequest& request, const AbortSignal& waitOn,
                           AbortSignal& signal, ncclResult_t code,
                           const char* reason) {
  Clock::time_point raisedAt;
  std::thread raiser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    raisedAt = Clock::now();
    signal.raise(code, reason);
  });
  Error e = expectError([&] { request.wait(waitOn, kLinkWaitSeconds); });
  const double late = secondsSince(raisedAt);
  raiser.join();
  EXPECT_LT(late, 0.2);
  EXPECT_EQ(e.code(), code);
  EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
}

}  // namespace

void expectCallerAbortEndsAWait(Link& link) {
  std::vector<uint8_t> buffer(1000);
  auto request = link.recv(buffer.data(), buffer.size(), kTestCall);
  AbortSignal callerAbort;
  expectRaisingEndsWait(*request, callerAbort, callerAbort, ncclRemoteError,
                        "test abort");
}

void expectTransportAbortFailsWaits(Link& link, AbortSignal& transportAbort) {
  std::vector<uint8_t> buffer(1000);
  auto request = link.recv(buffer.data(), buffer.size(), kTestCall);
  expectRaisingEndsWait(*request, AbortSignal(), transportAbort,
                        ncclSystemError, "communicator aborted");
  auto later = link.send(buffer.data(), 10, kTestCall);
  EXPECT_EQ(expectError([&] { later->done(); }).code(), ncclSystemError);
}

namespace {

CallSignature allReduceCall(ncclDataType_t dtype, uint64_t count) {
  CallSignature call;
  call.sequence = 1;
  call.call = OpKind::AllReduce;
  call.count = count;
  call.dtype = static_cast<uint8_t>(dtype);
  call.redOp = ncclSum;
  return call;
}

CallSignature broadcastCall(int root) {
  CallSignature call;
  call.sequence = 1;
  call.call = OpKind::Broadcast;
  call.count = 64;
  call.dtype = ncclInt8;
  call.root = root;
  return call;
}

void expectNamesBoth(const std::string& text, const std::string& first,
                     const std::string& second) {
  EXPECT_NE(text.find(first), std::string::npos) << text;
  EXPECT_NE(text.find(second), std::string::npos) << text;
}

// Until `signal` rises (polling `set`, as the async-error query does, for
// a transport without a thread of its own) or a second passes.
void expectRaisedSoon(const AbortSignal& signal, LinkSet& set,
                      const std::string& first, const std::string& second) {
  // Within a few milliseconds on an idle machine; the bound leaves room
  // for a loaded one (the tests run beside multi-process ones).
  constexpr double kSoonSeconds = 5;
  const auto start = Clock::now();
  while (!signal.raised() && secondsSince(start) < kSoonSeconds) {
    set.poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(signal.raised()) << "not raised within " << kSoonSeconds << " s";
  EXPECT_EQ(signal.code(), ncclInvalidUsage);
  expectNamesBoth(signal.reason(), first, second);
}

void expectReceiveFailsOnCalls(const TwoRanks& ranks, size_t sendBytes,
                               size_t receiveBytes) {
  const CallSignature sent = allReduceCall(ncclFloat32, sendBytes / 4);
  const CallSignature posted = allReduceCall(ncclInt32, receiveBytes / 4);
  std::vector<uint8_t> out(sendBytes, 1), in(receiveBytes);
  auto send = ranks.sets[0]->link(1)->send(out.data(), out.size(), sent);
  auto recv = ranks.sets[1]->link(0)->recv(in.data(), in.size(), posted);
  Error e = expectError([&] { recv->wait(AbortSignal(), kLinkWaitSeconds); });
  EXPECT_EQ(e.code(), ncclInvalidUsage);
  const std::string first = "rank 0 called " + describeCall(sent);
  const std::string second = "rank 1 called " + describeCall(posted);
  expectNamesBoth(e.what(), first, second);
  EXPECT_EQ(std::string(e.what()).find("size"), std::string::npos) << e.what();
  expectRaisedSoon(*ranks.aborts[1], *ranks.sets[1], first, second);
  expectRaisedSoon(*ranks.aborts[0], *ranks.sets[0], first, second);
}

}  // namespace

void expectCallsThatDisagreeFailBothEnds(const TwoRanks& ranks) {
  expectReceiveFailsOnCalls(ranks, 4096, 4096);
}

Error expectSizesThatDifferFailAtOnce(const TwoRanks& ranks,
                                      const std::vector<uint8_t>& out,
                                      std::vector<uint8_t>& in,
                                      size_t pieceBytes) {
  Link& sender = *ranks.sets[0]->link(1);
  Link& receiver = *ranks.sets[1]->link(0);
  const std::vector<uint8_t> first(8, 2);
  std::vector<uint8_t> firstIn(first.size());
  auto firstSend = sender.send(first.data(), first.size(), kTestCall);
  receiver.recv(firstIn.data(), firstIn.size(), kTestCall)
      ->wait(AbortSignal(), kLinkWaitSeconds);
  firstSend->wait(AbortSignal(), kLinkWaitSeconds);
  PiecedLink piecedSender(ranks.sets[0]->link(1), pieceBytes);
  PiecedLink piecedReceiver(ranks.sets[1]->link(0), pieceBytes);
  Link& from = pieceBytes != 0 ? piecedSender : sender;
  Link& to = pieceBytes != 0 ? piecedReceiver : receiver;
  auto send = from.send(out.data(), out.size(), kTestCall);
  auto recv = to.recv(in.data(), in.size(), kTestCall);
  const Clock::time_point start = Clock::now();
  Error e = expectError([&] { recv->wait(AbortSignal(), kLinkWaitSeconds); });
  EXPECT_LT(secondsSince(start), 5.0)
      << out.size() << " bytes sent against " << in.size() << " posted";
  return e;
}

void expectDisagreementBeforeSizes(const TwoRanks& ranks, size_t bytes) {
  expectReceiveFailsOnCalls(ranks, bytes, bytes / 2);
}

void expectUnclaimedCallThatDisagreesFailsBothEnds(const TwoRanks& ranks) {
  const CallSignature zeroCalled = broadcastCall(0);
  const CallSignature oneCalled = broadcastCall(1);
  ranks.calls[0]->record(zeroCalled);
  ranks.calls[1]->record(oneCalled);
  std::vector<uint8_t> out(64, 1);
  auto send = ranks.sets[0]->link(1)->send(out.data(), out.size(), zeroCalled);
  const std::string first = "rank 0 called " + describeCall(zeroCalled);
  const std::string second = "rank 1 called " + describeCall(oneCalled);
  expectRaisedSoon(*ranks.aborts[1], *ranks.sets[1], first, second);
  expectRaisedSoon(*ranks.aborts[0], *ranks.sets[0], first, second);
}

void expectLatestCallFromFollowsCollectives(const TwoRanks& ranks,
                                            size_t bigBytes) {
  const std::shared_ptr<Link> links[2] = {ranks.sets[0]->link(1),
                                          ranks.sets[1]->link(0)};
  EXPECT_EQ(links[0]->latestCallFrom(), 0u);
  EXPECT_EQ(links[1]->latestCallFrom(), 0u);
  // Both ranks exchange `bytes` for `call`, recorded first as a rank does.
  auto exchange = [&](const CallSignature& call, size_t bytes) {
    std::vector<uint8_t> in[2];
    runRanks(2, [&](int r) {
      if (!call.pointToPoint()) ranks.calls[r]->record(call);
      std::vector<uint8_t> out(bytes, static_cast<uint8_t>(r + 1));
      in[r].assign(bytes, 0);
      CallSignature sent = call, received = call;
      if (call.pointToPoint()) {
        sent.call = OpKind::Send;
        received.call = OpKind::Recv;
        sent.root = received.root = 1 - r;
      }
      auto send = links[r]->send(out.data(), bytes, sent);
      auto recv = links[r]->recv(in[r].data(), bytes, received);
      recv->wait(AbortSignal(), kLinkWaitSeconds);
      send->wait(AbortSignal(), kLinkWaitSeconds);
    });
    EXPECT_EQ(in[0], std::vector<uint8_t>(bytes, 2));
    EXPECT_EQ(in[1], std::vector<uint8_t>(bytes, 1));
  };
  CallSignature first = allReduceCall(ncclInt64, 5);
  exchange(first, 5 * 8);
  EXPECT_EQ(links[0]->latestCallFrom(), 1u);
  EXPECT_EQ(links[1]->latestCallFrom(), 1u);
  CallSignature second = allReduceCall(ncclInt8, bigBytes);
  second.sequence = 2;
  exchange(second, bigBytes);
  EXPECT_EQ(links[0]->latestCallFrom(), 2u);
  EXPECT_EQ(links[1]->latestCallFrom(), 2u);
  CallSignature pointToPoint;
  pointToPoint.sequence = 7;
  pointToPoint.call = OpKind::Send;
  pointToPoint.count = 64;
  pointToPoint.dtype = ncclInt8;
  exchange(pointToPoint, 64);
  EXPECT_EQ(links[0]->latestCallFrom(), 2u);
  EXPECT_EQ(links[1]->latestCallFrom(), 2u);
}

namespace {

// `count` elements of `dtype` from `seed`: finite values for the floating
// types (no NaN, whose bits a sum need not keep), any bytes for the rest.
std::vector<uint8_t> elementsOf(ncclDataType_t dtype, size_t count, int seed) {
  std::vector<uint8_t> data =
      makePayload(seed, 0, seed, count * dtypeSize(dtype));
  for (size_t i = 0; i < count; ++i) {
    const double value = static_cast<double>((i * 7 + seed) % 251) * 0.75 - 90;
    if (dtype == ncclFloat32) {
      const float narrow = static_cast<float>(value);
      std::memcpy(&data[i * 4], &narrow, 4);
    } else if (dtype == ncclFloat64) {
      std::memcpy(&data[i * 8], &value, 8);
    }
  }
  return data;
}

}  // namespace

void expectCombiningReceivesReduce(Link& sender, Link& receiver,
                                   const std::vector<size_t>& counts) {
  ASSERT_TRUE(receiver.reducesOnReceive());
  Reduction average;
  average.divisor = 2;
  const std::vector<std::pair<ncclDataType_t, Reduction>> reductions = {
      {ncclFloat32, Reduction{}},
      {ncclFloat32, average},
      {ncclInt32, Reduction{ncclInt32, ncclMax}},
      {ncclUint8, Reduction{}},
      {ncclFloat64, Reduction{}}};
  int seed = 0;
  for (const auto& [dtype, base] : reductions)
    for (size_t count : counts)
      for (bool inPlace : {false, true})
        for (bool incomingFirst : {false, true}) {
          ReceiveCombine combine{base, incomingFirst};
          combine.reduction.dtype = dtype;
          const size_t bytes = count * dtypeSize(dtype);
          std::vector<uint8_t> sent = elementsOf(dtype, count, ++seed);
          std::vector<uint8_t> local = elementsOf(dtype, count, ++seed);
          std::vector<uint8_t> expected(bytes);
          const void* sources[2] = {local.data(), sent.data()};
          if (incomingFirst) std::swap(sources[0], sources[1]);
          hostReduce(expected.data(), sources, 2, count, combine.reduction);
          std::vector<uint8_t> out(bytes, 0xee);
          void* dst = inPlace ? local.data() : out.data();
          auto send = sender.send(sent.data(), bytes, kTestCall);
          auto recv =
              receiver.recvReduce(dst, local.data(), bytes, combine, kTestCall);
          std::thread sending(
              [&] { send->wait(AbortSignal(), kLinkWaitSeconds); });
          recv->wait(AbortSignal(), kLinkWaitSeconds);
          sending.join();
          EXPECT_EQ(std::memcmp(dst, expected.data(), bytes), 0)
              << "dtype " << dtype << " op " << combine.reduction.op
              << (combine.reduction.divisor ? " (average)" : "") << " count "
              << count << " in place " << inPlace << " incoming first "
              << incomingFirst;
        }
}

void expectSilentPeerTimesOut(Link& link) {
  std::vector<uint8_t> buffer(8);
  auto request = link.recv(buffer.data(), buffer.size(), kTestCall);
  const auto start = Clock::now();
  Error e = expectError([&] { request->wait(AbortSignal(), 0.1); });
  EXPECT_EQ(e.code(), ncclRemoteError);
  EXPECT_LT(secondsSince(start), 1.0);
  EXPECT_FALSE(request->done());
}

}  // namespace hetccl
