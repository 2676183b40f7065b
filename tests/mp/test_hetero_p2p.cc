// Point-to-point on heterogeneous communicators beyond test_sendrecv.cc:
// three domains, the tcp transport, groups that mix peers inside and
// outside the rank's domain posted in a different random order on every
// rank, rings whose every hop crosses domains, all-pairs exchanges,
// multi-megabyte messages across domains over shm and tcp, and zero-byte
// messages. Every received byte is checked, send buffers must stay as they
// were, and the payload that crossed domains (hetcclCommCrossDomainBytes)
// must equal exactly the bytes of the messages between domains.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "harness/check.h"
#include "harness/data.h"
#include "harness/domains.h"
#include "harness/guarded_buffer.h"
#include "harness/hash.h"
#include "harness/nccl_handles.h"
#include "harness/run_ranks.h"
#include "hetccl.h"
#include "kit/dtype.h"

namespace hetccl::mp {
namespace {

// One communicator setup: ranks, their domains and the transport between.
struct Layout {
  std::string name;
  int nranks;
  std::string domainsSpec;    // the HETCCL_DOMAINS value
  std::vector<int> labels;    // the label that value gives each rank
  std::string transport;      // HETCCL_TRANSPORT; empty: auto (shm here)
  bool emulatedGpus = false;  // GPU ranks on the host: the GPU engine runs
  std::map<std::string, std::string> env = {};  // further variables

  bool crosses(int a, int b) const { return labels[a] != labels[b]; }
  int domainCount() const { return domainsByLabel(labels).count(); }

  RunOptions options(int timeoutSeconds = 120) const {
    RunOptions run;
    run.timeoutSeconds = timeoutSeconds;
    run.env["HETCCL_DOMAINS"] = domainsSpec;
    if (!transport.empty()) run.env["HETCCL_TRANSPORT"] = transport;
    if (emulatedGpus) run.env["HETCCL_EMULATED_GPU"] = "1";
    for (const auto& [name, value] : env) run.env[name] = value;
    return run;
  }
};

void PrintTo(const Layout& layout, std::ostream* out) { *out << layout.name; }

Layout withTransport(Layout layout, const std::string& transport) {
  layout.transport = transport;
  if (!transport.empty()) layout.name += "_" + transport;
  return layout;
}

Layout withEmulatedGpus(Layout layout) {
  layout.emulatedGpus = true;
  layout.name += "_gpu";
  return layout;
}

// Every emulated GPU's streams in one hardware queue, as
// CUDA_DEVICE_MAX_CONNECTIONS=1 on a GPU: its work runs in the order it
// was enqueued, whatever the stream.
Layout withOneQueue(Layout layout) {
  layout.env["HETCCL_EMULATED_QUEUES"] = "1";
  layout.name += "_one_queue";
  return layout;
}

// A staging copy takes up to 4 pieces whose slots follow each other
// (engine/gpu/proxy/slot_runs.h), however little the staging streams lag.
Layout withCopyRuns(Layout layout) {
  layout.env["HETCCL_STAGED_COPY_PIECES"] = "4";
  layout.env["HETCCL_STAGED_RUNS_FROM"] = "0";
  layout.name += "_runs";
  return layout;
}

// Three pairs of staging streams, taken by transfers in turn
// (engine/gpu/proxy/staging_streams.h).
Layout withStagingStreams(Layout layout) {
  layout.env["HETCCL_STAGING_STREAMS"] = "3";
  layout.name += "_3_streams";
  return layout;
}

// One message from `source` to `destination`, the `index`-th between them
// in a round. Both sides derive its bytes from these.
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
  return mixBits(id.round ^ 0x9e7e,
                 static_cast<uint64_t>(id.source) * 4096 +
                     static_cast<uint64_t>(id.destination),
                 static_cast<uint64_t>(id.index));
}

// One rank's side of one message. A zero-count message may be given no
// buffer at all (NULL), as frameworks do for empty tensors.
class Message {
 public:
  Message(const MessageId& id, const MessageShape& shape, bool sending,
          bool nullWhenEmpty = false)
      : id_(id),
        shape_(shape),
        sending_(sending),
        nullBuffer_(nullWhenEmpty && shape.count == 0),
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
    void* data = nullBuffer_ ? nullptr : buffer_.data();
    if (sending_) {
      return ncclSend(data, shape_.count, shape_.type, id_.destination, comm,
                      stream);
    }
    return ncclRecv(data, shape_.count, shape_.type, id_.source, comm, stream);
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

  bool sending() const { return sending_; }
  int peer() const { return sending_ ? id_.destination : id_.source; }
  size_t bytes() const { return buffer_.size(); }

  std::string describe() const {
    return std::string(sending_ ? "send" : "recv") + " #" +
           std::to_string(id_.index) + " " + std::to_string(id_.source) + "->" +
           std::to_string(id_.destination) + " " +
           kit::dataTypeOf(shape_.type).name +
           " count=" + std::to_string(shape_.count) +
           (nullBuffer_ ? " (NULL buffer)" : "") +
           " round=" + std::to_string(id_.round);
  }

 private:
  MessageId id_;
  MessageShape shape_;
  bool sending_;
  bool nullBuffer_;
  GuardedBuffer buffer_;
  uint64_t hashBefore_ = 0;
};

using MessageList = std::vector<std::unique_ptr<Message>>;

// `rank`'s side of a message of an explicit shape (the sender's if both).
std::unique_ptr<Message> sideOf(int rank, const MessageId& id,
                                const MessageShape& shape,
                                bool nullWhenEmpty = false) {
  return std::make_unique<Message>(id, shape, id.source == rank, nullWhenEmpty);
}

// The receiving side (of a self message too).
std::unique_ptr<Message> receiveSide(const MessageId& id,
                                     const MessageShape& shape,
                                     bool nullWhenEmpty = false) {
  return std::make_unique<Message>(id, shape, false, nullWhenEmpty);
}

void postGroup(const MessageList& messages, ncclComm_t comm,
               cudaStream_t stream) {
  MP_CHECK_NCCL(ncclGroupStart());
  for (const auto& message : messages) {
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

struct Traffic {
  size_t sent = 0;
  size_t received = 0;
};

Traffic crossDomainBytes(ncclComm_t comm) {
  Traffic traffic;
  MP_CHECK_NCCL(
      hetcclCommCrossDomainBytes(comm, &traffic.sent, &traffic.received));
  return traffic;
}

// The payload of `messages` that leaves or enters this rank's domain.
Traffic expectedTraffic(const MessageList& messages, const Layout& layout,
                        int rank) {
  Traffic traffic;
  for (const auto& message : messages) {
    if (!layout.crosses(rank, message->peer())) continue;
    (message->sending() ? traffic.sent : traffic.received) += message->bytes();
  }
  return traffic;
}

// Posts `messages` as one group, waits, verifies every message and checks
// that exactly their cross-domain payload crossed domains.
void exchangeAndCheck(const MessageList& messages, ncclComm_t comm,
                      const HostStream* stream, const Layout& layout, int rank,
                      const std::string& what) {
  Traffic before = crossDomainBytes(comm);
  postGroup(messages, comm, stream ? stream->get() : nullptr);
  if (stream) stream->synchronize();
  verifyAll(messages);
  Traffic after = crossDomainBytes(comm);
  Traffic expected = expectedTraffic(messages, layout, rank);
  MP_CHECK(after.sent - before.sent == expected.sent)
      << what << ": " << after.sent - before.sent
      << " bytes sent across domains, expected " << expected.sent;
  MP_CHECK(after.received - before.received == expected.received)
      << what << ": " << after.received - before.received
      << " bytes received across domains, expected " << expected.received;
}

Comm openComm(RankContext& ctx, const Layout& layout) {
  Comm comm(ctx.initComm());
  checkDomainCount(comm.get(), layout.domainCount());
  return comm;
}

// ---------------------------------------------------------------------
// Shuffled groups: a random number of messages (0 to 3) each way between
// every pair of ranks, self included, of random types and sizes (zero,
// tiny, up to a few thousand elements, now and then a few hundred KB).
// Each rank posts its side in an order drawn from its own seed; only the
// messages of one (peer, direction) keep their relative order, since that
// is how NCCL matches them.

MessageShape randomShape(const MessageId& id, size_t maxCount) {
  const std::vector<kit::DataType>& types = kit::allDataTypes();
  uint64_t bits = messageSeed(id);
  MessageShape shape{types[bits % types.size()].nccl, 0};
  size_t elementBytes = kit::dataTypeOf(shape.type).size;
  uint64_t size = bits >> 16;
  switch ((bits >> 8) % 8) {
    case 0:
      shape.count = 0;
      break;
    case 1:
    case 2:
      shape.count = 1 + size % 7;
      break;
    case 7:
      shape.count = (100000 + size % 200000) / elementBytes;
      break;
    default:
      shape.count = size % (maxCount + 1);
      break;
  }
  return shape;
}

int messagesBetween(int source, int destination, uint64_t round) {
  return static_cast<int>(mixBits(round, source, destination) % 4);
}

MessageList shuffledMessages(int rank, int nranks, uint64_t round,
                             size_t maxCount) {
  std::vector<std::deque<MessageId>> queues;
  for (int peer = 0; peer < nranks; ++peer) {
    for (bool outgoing : {true, false}) {
      // A self message is one queue: both of its sides are posted at once.
      if (peer == rank && !outgoing) continue;
      int source = outgoing ? rank : peer;
      int destination = outgoing ? peer : rank;
      std::deque<MessageId> queue;
      int count = messagesBetween(source, destination, round);
      for (int i = 0; i < count; ++i) {
        queue.push_back({source, destination, i, round});
      }
      if (!queue.empty()) queues.push_back(queue);
    }
  }
  std::mt19937_64 random(mixBits(round, rank, 0x5a11));
  MessageList list;
  while (!queues.empty()) {
    size_t pick = random() % queues.size();
    MessageId id = queues[pick].front();
    queues[pick].pop_front();
    MessageShape shape = randomShape(id, maxCount);
    // A self message needs both sides, in either order within the group.
    bool self = id.source == id.destination;
    bool receiveFirst = self && random() % 2 == 0;
    if (receiveFirst) list.push_back(receiveSide(id, shape));
    list.push_back(sideOf(rank, id, shape));
    if (self && !receiveFirst) list.push_back(receiveSide(id, shape));
    if (queues[pick].empty()) queues.erase(queues.begin() + pick);
  }
  return list;
}

struct ShuffledParam {
  Layout layout;
  bool onStream;

  std::string name() const {
    return layout.name + (onStream ? "_HostStream" : "_NullStream");
  }
};

void PrintTo(const ShuffledParam& param, std::ostream* out) {
  *out << param.name();
}

class HeteroShuffledGroupTest : public ::testing::TestWithParam<ShuffledParam> {
};

TEST_P(HeteroShuffledGroupTest, IntraAndCrossDomainPeersInRandomOrder) {
  const ShuffledParam& param = GetParam();
  const Layout& layout = param.layout;
  runRanks(
      layout.nranks,
      [&](RankContext& ctx) {
        Comm comm = openComm(ctx, layout);
        HostStream stream;
        size_t maxCount = layout.nranks > 5 ? 1000 : 5000;
        for (uint64_t round = 1; round <= 4; ++round) {
          MessageList messages =
              shuffledMessages(ctx.rank(), ctx.nranks(), round, maxCount);
          exchangeAndCheck(messages, comm.get(),
                           param.onStream ? &stream : nullptr, layout,
                           ctx.rank(), "round " + std::to_string(round));
        }
        comm.destroy();
      },
      layout.options());
}

const Layout kThreeDomains4 = {"4ranks_0122", 4, "0,1,2,2", {0, 1, 2, 2}, ""};
const Layout kInterleaved5 = {
    "5ranks_01220", 5, "0,1,2,2,0", {0, 1, 2, 2, 0}, ""};
// Every pair of neighbouring ranks is in two different domains.
const Layout kAlternating6 = {
    "6ranks_012012", 6, "0,1,2,0,1,2", {0, 1, 2, 0, 1, 2}, ""};
const Layout kSplit3Of8 = {
    "8ranks_split3", 8, "split:3", {0, 0, 0, 1, 1, 1, 2, 2}, ""};
const Layout kPairs4 = {"4ranks_0011", 4, "0,0,1,1", {0, 0, 1, 1}, ""};

INSTANTIATE_TEST_SUITE_P(
    Mp, HeteroShuffledGroupTest,
    ::testing::Values(ShuffledParam{kThreeDomains4, false},
                      ShuffledParam{kInterleaved5, true},
                      ShuffledParam{withTransport(kInterleaved5, "tcp"), false},
                      ShuffledParam{withTransport(kAlternating6, "tcp"), true},
                      ShuffledParam{kSplit3Of8, true},
                      ShuffledParam{withEmulatedGpus(kInterleaved5), true}),
    [](const ::testing::TestParamInfo<ShuffledParam>& info) {
      return info.param.name();
    });

// ---------------------------------------------------------------------
// Tests over one layout, once with the automatic transport (shm on one
// host) and once with tcp forced.

class HeteroP2pTest : public ::testing::TestWithParam<Layout> {};

std::string layoutName(const ::testing::TestParamInfo<Layout>& info) {
  return info.param.name;
}

// Both ways around a ring whose every hop crosses domains: each rank sends
// to both neighbours and receives from both, with sizes that differ per
// sender, alternating the NULL stream and a host stream. Odd ranks post
// their receives first.
class HeteroRingTest : public HeteroP2pTest {};

TEST_P(HeteroRingTest, BothWaysEveryHopCrossesDomains) {
  const Layout layout = GetParam();
  runRanks(
      layout.nranks,
      [&](RankContext& ctx) {
        Comm comm = openComm(ctx, layout);
        HostStream stream;
        int me = ctx.rank();
        int next = (me + 1) % ctx.nranks();
        int previous = (me + ctx.nranks() - 1) % ctx.nranks();
        MP_CHECK(layout.crosses(me, next) && layout.crosses(me, previous))
            << "the layout must put neighbours in different domains";
        const ncclDataType_t types[] = {ncclUint8, ncclFloat16, ncclInt64,
                                        ncclFloat32, ncclBfloat16};
        for (uint64_t round = 1; round <= 5; ++round) {
          // The count depends on the sender, so neighbours exchange
          // messages of different sizes.
          auto shapeFrom = [&](int sender) {
            size_t count = round == 1 ? 0
                                      : (round * 7919 + sender * 1031) %
                                            (size_t{1} << (4 * round));
            return MessageShape{types[round - 1], count};
          };
          MessageList sends, receives;
          sends.push_back(sideOf(me, {me, next, 0, round}, shapeFrom(me)));
          sends.push_back(sideOf(me, {me, previous, 0, round}, shapeFrom(me)));
          receives.push_back(
              sideOf(me, {previous, me, 0, round}, shapeFrom(previous)));
          receives.push_back(sideOf(me, {next, me, 0, round}, shapeFrom(next)));
          MessageList all;
          MessageList& firstHalf = me % 2 ? receives : sends;
          MessageList& secondHalf = me % 2 ? sends : receives;
          for (auto& m : firstHalf) all.push_back(std::move(m));
          for (auto& m : secondHalf) all.push_back(std::move(m));
          exchangeAndCheck(all, comm.get(), round % 2 ? &stream : nullptr,
                           layout, me, "round " + std::to_string(round));
        }
        comm.destroy();
      },
      layout.options());
}

INSTANTIATE_TEST_SUITE_P(Mp, HeteroRingTest,
                         ::testing::Values(kAlternating6,
                                           withTransport(kAlternating6, "tcp"),
                                           withEmulatedGpus(kAlternating6)),
                         layoutName);

// Every rank sends one message to every rank (itself included) and
// receives one from each, posted peer by peer as an all-to-all-v would:
// sizes differ per (source, destination) pair, types per round.
class HeteroAllPairsTest : public HeteroP2pTest {};

TEST_P(HeteroAllPairsTest, EveryRankToEveryRankWithDistinctSizes) {
  const Layout layout = GetParam();
  runRanks(
      layout.nranks,
      [&](RankContext& ctx) {
        Comm comm = openComm(ctx, layout);
        HostStream stream;
        int me = ctx.rank();
        const ncclDataType_t types[] = {ncclInt32, ncclFloat64, ncclInt8,
                                        ncclFloat8e4m3};
        uint64_t round = 0;
        for (ncclDataType_t type : types) {
          ++round;
          auto shape = [&](int source, int destination) {
            size_t count =
                (source * 613 + destination * 97 + round * 11) % 4001;
            return MessageShape{type, count};
          };
          MessageList messages;
          for (int step = 0; step < ctx.nranks(); ++step) {
            // Step s pairs each rank with rank+s and rank-s, so in every
            // step the ranks talk to peers at the same distance.
            int to = (me + step) % ctx.nranks();
            int from = (me + ctx.nranks() - step) % ctx.nranks();
            messages.push_back(sideOf(me, {me, to, 0, round}, shape(me, to)));
            messages.push_back(
                receiveSide({from, me, 0, round}, shape(from, me)));
          }
          exchangeAndCheck(messages, comm.get(), round % 2 ? &stream : nullptr,
                           layout, me, "round " + std::to_string(round));
        }
        comm.destroy();
      },
      layout.options());
}

INSTANTIATE_TEST_SUITE_P(Mp, HeteroAllPairsTest,
                         ::testing::Values(kInterleaved5,
                                           withTransport(kInterleaved5, "tcp"),
                                           withEmulatedGpus(kInterleaved5)),
                         layoutName);

// Multi-megabyte messages, several at once: rank r sends to r+1 (inside
// its domain for even r, across for odd r) and to r+2 (always across), and
// receives from r-1 and r-2, all in one group on a host stream. GPU ranks
// stage transfers of 4 pieces of 1 MB here: with all of a rank's streams
// in one queue, a copy per piece, runs of pieces per copy (slot_runs.h),
// and three pairs of staging streams, in several queues and in one.
class HeteroLargeTest : public HeteroP2pTest {};

TEST_P(HeteroLargeTest, SeveralMegabytesAcrossDomains) {
  const Layout layout = GetParam();
  runRanks(
      layout.nranks,
      [&](RankContext& ctx) {
        Comm comm = openComm(ctx, layout);
        HostStream stream;
        int me = ctx.rank();
        int n = ctx.nranks();
        const MessageShape shapes[] = {{ncclInt8, (size_t{6} << 20) + 3},
                                       {ncclFloat64, (size_t{5} << 17) + 1}};
        uint64_t round = 100;
        for (const MessageShape& shape : shapes) {
          ++round;
          MessageList messages;
          for (int distance : {1, 2}) {
            int to = (me + distance) % n;
            int from = (me + n - distance) % n;
            messages.push_back(sideOf(me, {me, to, distance, round}, shape));
            messages.push_back(sideOf(me, {from, me, distance, round}, shape));
          }
          exchangeAndCheck(messages, comm.get(), &stream, layout, me,
                           "round " + std::to_string(round));
        }
        comm.destroy();
      },
      layout.options(180));
}

INSTANTIATE_TEST_SUITE_P(
    Mp, HeteroLargeTest,
    ::testing::Values(
        kPairs4, withTransport(kPairs4, "tcp"),
        withEmulatedGpus(withTransport(kPairs4, "tcp")),
        withOneQueue(withEmulatedGpus(withTransport(kPairs4, "tcp"))),
        withCopyRuns(withOneQueue(withEmulatedGpus(withTransport(kPairs4,
                                                                 "tcp")))),
        withStagingStreams(withEmulatedGpus(withTransport(kPairs4, "tcp"))),
        withStagingStreams(
            withOneQueue(withEmulatedGpus(withTransport(kPairs4, "tcp"))))),
    layoutName);

// Zero-byte messages: groups of nothing but empty messages (some with NULL
// buffers) to every peer, empty messages between non-empty ones to the
// same peer (they still take their place in the matching order), and an
// ungrouped empty send/receive across domains. Nothing may be written and
// no payload may cross.
class HeteroZeroBytesTest : public HeteroP2pTest {};

MessageList emptyToEveryone(int me, int nranks, uint64_t round) {
  MessageList messages;
  for (int peer = 0; peer < nranks; ++peer) {
    bool useNull = (peer + static_cast<int>(round)) % 2 == 0;
    const std::vector<kit::DataType>& types = kit::allDataTypes();
    MessageShape shape{types[(peer + round) % types.size()].nccl, 0};
    messages.push_back(sideOf(me, {me, peer, 0, round}, shape, useNull));
    messages.push_back(receiveSide({peer, me, 0, round}, shape, useNull));
  }
  return messages;
}

// To each peer: empty, 257 int32, empty, 1 byte, empty (in that order).
MessageList emptyBetweenFull(int me, int nranks, uint64_t round) {
  const MessageShape sequence[] = {{ncclFloat32, 0},
                                   {ncclInt32, 257},
                                   {ncclInt8, 0},
                                   {ncclUint8, 1},
                                   {ncclFloat64, 0}};
  MessageList messages;
  for (int index = 0; index < 5; ++index) {
    for (int step = 1; step < nranks; ++step) {
      int to = (me + step) % nranks;
      int from = (me + nranks - step) % nranks;
      messages.push_back(sideOf(me, {me, to, index, round}, sequence[index]));
      messages.push_back(
          receiveSide({from, me, index, round}, sequence[index]));
    }
  }
  return messages;
}

TEST_P(HeteroZeroBytesTest, EmptyMessagesMatchAndMoveNothing) {
  const Layout layout = GetParam();
  runRanks(
      layout.nranks,
      [&](RankContext& ctx) {
        Comm comm = openComm(ctx, layout);
        HostStream stream;
        int me = ctx.rank();
        int n = ctx.nranks();
        exchangeAndCheck(emptyToEveryone(me, n, 1), comm.get(), nullptr, layout,
                         me, "empty messages, NULL stream");
        exchangeAndCheck(emptyToEveryone(me, n, 2), comm.get(), &stream, layout,
                         me, "empty messages, host stream");
        exchangeAndCheck(emptyBetweenFull(me, n, 3), comm.get(), &stream,
                         layout, me, "empty between full messages");
        // Ungrouped, on the NULL stream: rank 0 sends to the next rank
        // (in another domain), which receives; the others stay out.
        MP_CHECK(layout.crosses(0, 1))
            << "ranks 0 and 1 must be in two domains";
        if (me <= 1) {
          Traffic before = crossDomainBytes(comm.get());
          auto message =
              sideOf(me, {0, 1, 0, 4}, MessageShape{ncclInt32, 0}, true);
          MP_CHECK_NCCL(message->post(comm.get(), nullptr))
              << message->describe() << ", ungrouped";
          std::string problem = message->verify();
          MP_CHECK(problem.empty()) << message->describe() << ": " << problem;
          Traffic after = crossDomainBytes(comm.get());
          MP_CHECK(after.sent == before.sent &&
                   after.received == before.received)
              << "an ungrouped empty message moved bytes across domains";
        }
        // Everyone still works together afterwards.
        exchangeAndCheck(emptyBetweenFull(me, n, 5), comm.get(), nullptr,
                         layout, me, "after the ungrouped empty message");
        comm.destroy();
      },
      layout.options());
}

INSTANTIATE_TEST_SUITE_P(Mp, HeteroZeroBytesTest,
                         ::testing::Values(kThreeDomains4,
                                           withTransport(kThreeDomains4, "tcp"),
                                           withEmulatedGpus(kThreeDomains4)),
                         layoutName);

// Ranks may leave at different times: a rank whose work is done destroys
// its communicator and exits (NCCL's finalize and destroy are local), and
// the ranks that remain must still be able to talk among themselves. Here
// domain 1 (ranks 2, 3) leaves after a cross-domain exchange; once both
// processes are gone, ranks 0 and 1 exchange messages inside domain 0.
// The tcp cases above meet this by chance (a tcp send completes once the
// kernel holds the bytes, so its rank may exit while the peers of its
// domain still work); this test meets it every time.

// Waits until no process `pid` exists (the harness reaps exited ranks).
bool waitForExit(pid_t pid, double timeoutSeconds) {
  double deadline = nowSeconds() + timeoutSeconds;
  while (nowSeconds() < deadline) {
    if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

TEST(HeteroPeerExit, RanksThatLeftDoNotBreakTheOthers) {
  const Layout layout = kPairs4;
  runRanks(
      layout.nranks,
      [&](RankContext& ctx) {
        Comm comm = openComm(ctx, layout);
        int me = ctx.rank();
        int n = ctx.nranks();
        std::vector<std::string> pids =
            ctx.exchange(std::to_string(::getpid()));
        MessageList ring;
        ring.push_back(sideOf(me, {me, (me + 1) % n, 0, 500},
                              MessageShape{ncclInt32, 4099}));
        ring.push_back(sideOf(me, {(me + n - 1) % n, me, 0, 500},
                              MessageShape{ncclInt32, 4099}));
        exchangeAndCheck(ring, comm.get(), nullptr, layout, me,
                         "ring before domain 1 leaves");
        if (layout.labels[me] == 1) {
          comm.destroy();
          return;
        }
        for (int r = 0; r < n; ++r) {
          if (layout.labels[r] != 1) continue;
          MP_CHECK(waitForExit(std::stoi(pids[r]), 30))
              << "rank " << r << " did not exit";
        }
        HostStream stream;
        int peer = me ^ 1;
        for (uint64_t round = 501; round <= 502; ++round) {
          MessageList pair;
          pair.push_back(sideOf(me, {me, peer, 0, round},
                                MessageShape{ncclFloat32, 10007}));
          pair.push_back(sideOf(me, {peer, me, 0, round},
                                MessageShape{ncclFloat32, 10007}));
          exchangeAndCheck(pair, comm.get(), round % 2 ? &stream : nullptr,
                           layout, me,
                           "inside domain 0 after domain 1 left, round " +
                               std::to_string(round));
        }
        comm.destroy();
      },
      layout.options());
}

}  // namespace
}  // namespace hetccl::mp
