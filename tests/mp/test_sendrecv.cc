// Point-to-point: grouped exchanges posted in a different random order on
// every rank, several messages to one peer in a group (matched in order),
// self messages, zero-size messages, rings, multi-megabyte messages, and
// ungrouped pairs on separate host streams or the NULL stream.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "harness/check.h"
#include "harness/data.h"
#include "harness/domains.h"
#include "harness/guarded_buffer.h"
#include "harness/hash.h"
#include "harness/nccl_handles.h"
#include "harness/run_ranks.h"
#include "harness/test_params.h"
#include "kit/dtype.h"

namespace hetccl::mp {
namespace {

// One message from `source` to `destination`, the `index`-th between them
// in a round. Both sides derive its type, count and bytes from these.
struct MessageId {
  int source;
  int destination;
  int index;
  uint64_t round;
};

struct MessageShape {
  ncclDataType_t type;
  size_t count;
};

uint64_t messageSeed(const MessageId& id) {
  return mixBits(id.round,
                 static_cast<uint64_t>(id.source) * 4096 +
                     static_cast<uint64_t>(id.destination),
                 static_cast<uint64_t>(id.index));
}

// A mix of types and sizes, including zero and odd counts.
MessageShape shapeOf(const MessageId& id, size_t maxCount) {
  const std::vector<kit::DataType>& types = kit::allDataTypes();
  uint64_t bits = messageSeed(id);
  MessageShape shape;
  shape.type = types[bits % types.size()].nccl;
  switch ((bits >> 8) % 4) {
    case 0:
      shape.count = 0;
      break;
    case 1:
      shape.count = 1 + (bits >> 16) % 7;
      break;
    default:
      shape.count = (bits >> 16) % (maxCount + 1);
      break;
  }
  return shape;
}

// One rank's side of one message.
class Message {
 public:
  // `sending`: this rank is the source (for self messages, both are).
  Message(const MessageId& id, const MessageShape& shape, bool sending)
      : id_(id),
        shape_(shape),
        sending_(sending),
        buffer_(shape.count * kit::dataTypeOf(shape.type).size) {
    if (sending_) {
      fillPatternBytes(messageSeed(id_), id_.source, 0, buffer_.size(),
                       buffer_.data());
      hashBefore_ = hashBytes(buffer_.data(), buffer_.size());
    } else {
      buffer_.fill(0xcd);
    }
  }

  ncclResult_t post(ncclComm_t comm, cudaStream_t stream) {
    if (sending_) {
      return ncclSend(buffer_.data(), shape_.count, shape_.type,
                      id_.destination, comm, stream);
    }
    return ncclRecv(buffer_.data(), shape_.count, shape_.type, id_.source, comm,
                    stream);
  }

  std::string verify() const {
    if (!buffer_.guardsIntact()) return "bytes outside the buffer changed";
    if (sending_) {
      bool same = hashBytes(buffer_.data(), buffer_.size()) == hashBefore_;
      return same ? std::string() : "send buffer was modified";
    }
    return checkPatternBytes(messageSeed(id_), id_.source, 0, buffer_.size(),
                             buffer_.data());
  }

  std::string describe() const {
    return std::string(sending_ ? "send" : "recv") + " #" +
           std::to_string(id_.index) + " " + std::to_string(id_.source) + "->" +
           std::to_string(id_.destination) + " " +
           kit::dataTypeOf(shape_.type).name +
           " count=" + std::to_string(shape_.count) +
           " round=" + std::to_string(id_.round);
  }

 private:
  MessageId id_;
  MessageShape shape_;
  bool sending_;
  GuardedBuffer buffer_;
  uint64_t hashBefore_ = 0;
};

using MessageList = std::vector<std::unique_ptr<Message>>;

// This rank's messages with every peer (itself included): 1 to 3 each way
// per pair, in a random order that keeps messages of one (peer, direction)
// in sequence, as NCCL matches them in order.
MessageList allPairsMessages(int rank, int nranks, uint64_t round,
                             size_t maxCount) {
  struct Queue {
    bool outgoing;
    std::deque<MessageId> ids;
  };
  std::vector<Queue> queues;
  for (int peer = 0; peer < nranks; ++peer) {
    for (bool outgoing : {true, false}) {
      int source = outgoing ? rank : peer;
      int destination = outgoing ? peer : rank;
      int messages = 1 + (source * 7 + destination * 3 + round) % 3;
      Queue queue{outgoing, {}};
      for (int i = 0; i < messages; ++i) {
        queue.ids.push_back({source, destination, i, round});
      }
      queues.push_back(queue);
    }
  }
  std::mt19937_64 random(mixBits(round, rank, 0x0de7));
  MessageList list;
  while (!queues.empty()) {
    size_t pick = random() % queues.size();
    MessageId id = queues[pick].ids.front();
    list.push_back(std::make_unique<Message>(id, shapeOf(id, maxCount),
                                             queues[pick].outgoing));
    queues[pick].ids.pop_front();
    if (queues[pick].ids.empty()) queues.erase(queues.begin() + pick);
  }
  return list;
}

void postGroup(MessageList& messages, ncclComm_t comm, cudaStream_t stream) {
  MP_CHECK_NCCL(ncclGroupStart());
  for (auto& message : messages) {
    MP_CHECK_NCCL(message->post(comm, stream)) << message->describe();
  }
  MP_CHECK_NCCL(ncclGroupEnd());
}

void verifyAll(const MessageList& messages) {
  for (const auto& message : messages) {
    std::string problem = message->verify();
    MP_CHECK(problem.empty()) << message->describe() << ": " << problem;
  }
}

using ExchangeParam = StreamModeParam;

class GroupedExchangeTest : public ::testing::TestWithParam<ExchangeParam> {};

// Several rounds of everyone-to-everyone, including self, in one group.
TEST_P(GroupedExchangeTest, ShuffledOrderMatchesInSequence) {
  ExchangeParam param = GetParam();
  RunOptions options;
  options.timeoutSeconds = 120;
  param.domains.applyTo(&options);
  runRanks(
      param.nranks,
      [&](RankContext& ctx) {
        Comm comm(ctx.initComm());
        checkDomainCount(comm.get(), param.domains.count());
        HostStream stream;
        cudaStream_t s = param.onStream ? stream.get() : nullptr;
        size_t maxCount = param.nranks > 4 ? 300 : 5000;
        for (uint64_t round = 1; round <= 4; ++round) {
          MessageList messages =
              allPairsMessages(ctx.rank(), ctx.nranks(), round, maxCount);
          postGroup(messages, comm.get(), s);
          if (param.onStream) stream.synchronize();
          verifyAll(messages);
        }
        comm.destroy();
      },
      options);
}

INSTANTIATE_TEST_SUITE_P(
    Mp, GroupedExchangeTest,
    ::testing::Values(
        ExchangeParam{2, false, oneDomain()},
        ExchangeParam{2, true, oneDomain()},
        ExchangeParam{3, false, oneDomain()},
        ExchangeParam{3, true, oneDomain()},
        ExchangeParam{4, true, oneDomain()},
        ExchangeParam{8, false, oneDomain()},
        ExchangeParam{8, true, oneDomain()},
        // Messages between domains are routed over the transports.
        ExchangeParam{2, false, domainsByLabel({0, 1})},
        ExchangeParam{3, true, domainsByLabel({0, 1, 1})},
        ExchangeParam{4, false, domainsByLabel({0, 1, 0, 1})},
        ExchangeParam{8, true, domainsByLabel({0, 0, 1, 1, 1, 1, 1, 1})}),
    [](const ::testing::TestParamInfo<ExchangeParam>& info) {
      return info.param.name();
    });

// A message of one explicit shape from `source` to `destination`, seen
// from `rank` (which must be one of them; the sender if both).
std::unique_ptr<Message> fixedMessage(int source, int destination, int index,
                                      uint64_t round, MessageShape shape,
                                      int rank) {
  return std::make_unique<Message>(MessageId{source, destination, index, round},
                                   shape, source == rank);
}

struct RingParam {
  int nranks;
  DomainLayout domains;

  std::string name() const {
    return std::to_string(nranks) + "ranks_" + domains.name();
  }
};

void PrintTo(const RingParam& param, std::ostream* out) {
  *out << param.name();
}

class RingTest : public ::testing::TestWithParam<RingParam> {};

// Send to the next rank, receive from the previous one; odd sizes up to a
// megabyte, alternating NULL stream and host stream.
TEST_P(RingTest, OddSizesAroundTheRing) {
  RingParam param = GetParam();
  RunOptions options;
  param.domains.applyTo(&options);
  int expectedDomains = param.domains.count();
  runRanks(
      param.nranks,
      [expectedDomains](RankContext& ctx) {
        Comm comm(ctx.initComm());
        checkDomainCount(comm.get(), expectedDomains);
        HostStream stream;
        int next = (ctx.rank() + 1) % ctx.nranks();
        int previous = (ctx.rank() + ctx.nranks() - 1) % ctx.nranks();
        const MessageShape shapes[] = {{ncclUint8, 1},
                                       {ncclFloat16, 4097},
                                       {ncclInt64, 65537},
                                       {ncclFloat32, (size_t{1} << 18) + 1}};
        uint64_t round = 0;
        for (const MessageShape& shape : shapes) {
          ++round;
          MessageList messages;
          messages.push_back(
              fixedMessage(ctx.rank(), next, 0, round, shape, ctx.rank()));
          messages.push_back(
              fixedMessage(previous, ctx.rank(), 0, round, shape, ctx.rank()));
          bool onStream = round % 2 == 0;
          postGroup(messages, comm.get(), onStream ? stream.get() : nullptr);
          if (onStream) stream.synchronize();
          verifyAll(messages);
        }
        comm.destroy();
      },
      options);
}

INSTANTIATE_TEST_SUITE_P(
    Mp, RingTest,
    ::testing::Values(RingParam{3, oneDomain()}, RingParam{8, oneDomain()},
                      RingParam{3, domainsByLabel({0, 1, 2})},
                      RingParam{8, domainsByLabel({0, 1, 1, 0, 2, 2, 2, 1})}),
    [](const ::testing::TestParamInfo<RingParam>& info) {
      return info.param.name();
    });

// Several megabytes each way at once, between pairs (0,1), (2,3).
TEST(SendRecv, LargeMessagesBothWays) {
  runRanks(4, [](RankContext& ctx) {
    Comm comm(ctx.initComm());
    HostStream stream;
    int peer = ctx.rank() ^ 1;
    const MessageShape shapes[] = {{ncclInt8, (size_t{8} << 20) + 3},
                                   {ncclFloat64, (size_t{3} << 17) + 1}};
    uint64_t round = 100;
    for (const MessageShape& shape : shapes) {
      ++round;
      MessageList messages;
      messages.push_back(
          fixedMessage(peer, ctx.rank(), 0, round, shape, ctx.rank()));
      messages.push_back(
          fixedMessage(ctx.rank(), peer, 0, round, shape, ctx.rank()));
      postGroup(messages, comm.get(), stream.get());
      stream.synchronize();
      verifyAll(messages);
    }
    comm.destroy();
  });
}

// A rank sending to itself: only legal inside a group.
TEST(SendRecv, SelfSendRecvInGroup) {
  runRanks(2, [](RankContext& ctx) {
    Comm comm(ctx.initComm());
    HostStream stream;
    int me = ctx.rank();
    const MessageShape shapes[] = {{ncclInt32, 0},
                                   {ncclInt32, 1},
                                   {ncclBfloat16, 1023},
                                   {ncclUint64, 100003}};
    uint64_t round = 200;
    for (const MessageShape& shape : shapes) {
      ++round;
      // Two messages to itself, received in the order sent; receives
      // are posted before the sends to show that order does not matter.
      MessageList receives, sends;
      for (int index = 0; index < 2; ++index) {
        MessageId id{me, me, index, round};
        receives.push_back(std::make_unique<Message>(id, shape, false));
        sends.push_back(std::make_unique<Message>(id, shape, true));
      }
      MP_CHECK_NCCL(ncclGroupStart());
      for (auto& m : receives) MP_CHECK_NCCL(m->post(comm.get(), stream.get()));
      for (auto& m : sends) MP_CHECK_NCCL(m->post(comm.get(), stream.get()));
      MP_CHECK_NCCL(ncclGroupEnd());
      stream.synchronize();
      verifyAll(sends);
      verifyAll(receives);
    }
    comm.destroy();
  });
}

// Ungrouped: each rank sends three messages to the next rank on one host
// stream and receives three from the previous rank on another; messages on
// one stream to one peer match in order.
TEST(SendRecv, UngroupedOnSeparateStreams) {
  runRanks(3, [](RankContext& ctx) {
    Comm comm(ctx.initComm());
    HostStream sendStream, recvStream;
    int next = (ctx.rank() + 1) % ctx.nranks();
    int previous = (ctx.rank() + ctx.nranks() - 1) % ctx.nranks();
    MessageList sends, receives;
    for (int i = 0; i < 3; ++i) {
      MessageShape shape{ncclFloat32, size_t(1000 * i + 17)};
      sends.push_back(
          fixedMessage(ctx.rank(), next, i, 300, shape, ctx.rank()));
      receives.push_back(
          fixedMessage(previous, ctx.rank(), i, 300, shape, ctx.rank()));
    }
    for (auto& m : sends) MP_CHECK_NCCL(m->post(comm.get(), sendStream.get()));
    for (auto& m : receives) {
      MP_CHECK_NCCL(m->post(comm.get(), recvStream.get()));
    }
    recvStream.synchronize();
    sendStream.synchronize();
    verifyAll(sends);
    verifyAll(receives);
    comm.destroy();
  });
}

// Ungrouped ping-pong on the NULL stream: each call completes before it
// returns, so the order of calls alone keeps the ranks in step.
TEST(SendRecv, UngroupedPingPongOnNullStream) {
  runRanks(2, [](RankContext& ctx) {
    Comm comm(ctx.initComm());
    int peer = 1 - ctx.rank();
    for (int i = 0; i < 6; ++i) {
      MessageShape shape{ncclUint8, size_t(i * 997)};
      int sender = i % 2;
      auto message =
          fixedMessage(sender, 1 - sender, i, 400, shape, ctx.rank());
      MP_CHECK_NCCL(message->post(comm.get(), nullptr))
          << message->describe() << " with peer " << peer;
      std::string problem = message->verify();
      MP_CHECK(problem.empty()) << message->describe() << ": " << problem;
    }
    comm.destroy();
  });
}

}  // namespace
}  // namespace hetccl::mp
