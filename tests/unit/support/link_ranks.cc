#include "support/link_ranks.h"

#include <gtest/gtest.h>

#include <string>

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
                 const std::vector<size_t>& sizes) {
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
    for (const auto* list : {&sends, &recvs})
      for (size_t i = list->size(); i-- > 0;)
        (*list)[i].request->wait(AbortSignal(), kLinkWaitSeconds);
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

}  // namespace hetccl
