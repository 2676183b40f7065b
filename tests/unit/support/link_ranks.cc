#include "support/link_ranks.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "support/elapsed.h"
#include "support/expect_error.h"

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

void exchangeAll(const std::vector<LinkSet*>& sets,
                 const std::vector<size_t>& sizes, Completion completion) {
  const int nranks = static_cast<int>(sets.size());
  size_t total = 0;
  for (size_t s : sizes) total += s;
  std::vector<std::vector<size_t>> sentBefore(nranks), receivedBefore(nranks);
  for (int r = 0; r < nranks; ++r)
    for (int p = 0; p < nranks; ++p) {
      if (p == r) continue;
      auto link = sets[r]->link(p);
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
      auto link = sets[r]->link(p);
      EXPECT_EQ(link->peer(), p);
      for (size_t i = 0; i < sizes.size(); ++i) {
        int index = static_cast<int>(i);
        outgoing.push_back(makePayload(r, p, index, sizes[i]));
        sends.push_back(
            {p, index, link->send(outgoing.back().data(), sizes[i])});
        incoming.emplace_back(sizes[i], 0xEE);
        recvs.push_back(
            {p, index, link->recv(incoming.back().data(), sizes[i])});
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
      auto link = sets[r]->link(p);
      EXPECT_EQ(link->bytesSent() - sentBefore[r][k], total);
      EXPECT_EQ(link->bytesReceived() - receivedBefore[r][k], total);
      ++k;
    }
  }
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
  auto request = link.recv(buffer.data(), buffer.size());
  AbortSignal callerAbort;
  expectRaisingEndsWait(*request, callerAbort, callerAbort, ncclRemoteError,
                        "test abort");
}

void expectTransportAbortFailsWaits(Link& link, AbortSignal& transportAbort) {
  std::vector<uint8_t> buffer(1000);
  auto request = link.recv(buffer.data(), buffer.size());
  expectRaisingEndsWait(*request, AbortSignal(), transportAbort,
                        ncclSystemError, "communicator aborted");
  auto later = link.send(buffer.data(), 10);
  EXPECT_EQ(expectError([&] { later->done(); }).code(), ncclSystemError);
}

void expectSilentPeerTimesOut(Link& link) {
  std::vector<uint8_t> buffer(8);
  auto request = link.recv(buffer.data(), buffer.size());
  const auto start = Clock::now();
  Error e = expectError([&] { request->wait(AbortSignal(), 0.1); });
  EXPECT_EQ(e.code(), ncclRemoteError);
  EXPECT_LT(secondsSince(start), 1.0);
  EXPECT_FALSE(request->done());
}

}  // namespace hetccl
