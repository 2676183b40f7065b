// The staging proxy's control words: a captured launch keeps one for as
// long as the communicator lives (a graph may replay it until then), and
// a capture past the last word fails with ncclInvalidUsage and says what
// to do, rather than sharing a word with another graph's launch. And the
// waits it marks for the stall reports: which way, at which stage of the
// engine and how many of the transfer's pieces are done, or the domain
// step that the stream has not got past.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "engine/gpu/proxy/staging_proxy.h"
#include "engine/gpu/proxy/staging_ring.h"
#include "runtime/host/emulated_device_module.h"
#include "util/abort_signal.h"

namespace hetccl {
namespace {

constexpr size_t kWords = 3;

TEST(StagingProxyWords, ACaptureBeyondTheLastWordFailsWithInvalidUsage) {
  StagingProxy proxy(
      std::make_shared<AbortSignal>(), /*timeoutSeconds=*/0,
      /*gateWord=*/nullptr,
      PinnedHostMemory(emulatedDeviceModule(), kWords * sizeof(uint64_t)),
      [](const Error&) {}, /*waiting=*/nullptr);
  std::set<uint64_t*> taken;
  for (size_t i = 0; i < kWords; ++i) taken.insert(proxy.takeControlWord());
  EXPECT_EQ(taken.size(), kWords) << "two captures share a control word";
  try {
    proxy.takeControlWord();
    FAIL() << "a capture got a word past the last one";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ncclInvalidUsage);
    EXPECT_NE(std::string(error.what()).find("at most 3 captured launches"),
              std::string::npos)
        << error.what();
  }
}

// A request that completes when the test says.
class HeldRequest : public TransferRequest {
 public:
  bool done() override { return finished.load(); }
  void wait(const AbortSignal&, double) override {}
  std::atomic<bool> finished{false};
};

// A link to rank 1 whose transfers wait for the test.
class HeldLink : public Link {
 public:
  int peer() const override { return 1; }
  std::shared_ptr<TransferRequest> send(const void*, size_t,
                                        const CallSignature&,
                                        TransferPiece piece = {}) override {
    return hold();
  }
  std::shared_ptr<TransferRequest> recv(void*, size_t, const CallSignature&,
                                        TransferPiece piece = {}) override {
    return hold();
  }
  size_t bytesSent() const override { return 0; }
  size_t bytesReceived() const override { return 0; }

  size_t posted() {
    std::lock_guard<std::mutex> lock(mutex_);
    return requests_.size();
  }
  void finish(size_t index) {
    std::lock_guard<std::mutex> lock(mutex_);
    requests_.at(index)->finished = true;
  }

 private:
  std::shared_ptr<TransferRequest> hold() {
    std::lock_guard<std::mutex> lock(mutex_);
    requests_.push_back(std::make_shared<HeldRequest>());
    return requests_.back();
  }
  std::mutex mutex_;
  std::vector<std::shared_ptr<HeldRequest>> requests_;
};

CallSignature allReduce(uint64_t sequence) {
  CallSignature call;
  call.sequence = sequence;
  return call;
}

// The proxy's wait once it satisfies `want` (within 5 s), as marked.
WaitingCall::Stall markedWait(
    const WaitingCall& waiting,
    const std::function<bool(const WaitingCall::Stall&)>& want) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(5);
  std::optional<WaitingCall::Stall> stall;
  do {
    stall = waiting.stalledFor(0);
    if (stall && want(*stall)) return *stall;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  } while (std::chrono::steady_clock::now() < deadline);
  ADD_FAILURE() << "the proxy never marked the wait expected";
  return stall.value_or(WaitingCall::Stall{0, -1, 0, {}});
}

bool at(const WaitingCall::Stall& stall, EngineStage stage, uint32_t done) {
  return stall.leg.stage == stage && stall.leg.pieces.done == done;
}

TEST(StagingProxyWaits, SayTheWayTheStageAndThePiecesDone) {
  const DeviceModule& module = emulatedDeviceModule();
  uint64_t gateWord = 0;
  WaitingCall waiting;
  HeldLink link;
  StagingRings rings(module);
  uint64_t* counters = rings.linkCounters();
  StagingRing& sendRing = rings.make(64, 2, counters);
  StagingRing& receiveRing = rings.make(64, 2, counters + 2);
  StagingProxy proxy(
      std::make_shared<AbortSignal>(), /*timeoutSeconds=*/0, &gateWord,
      PinnedHostMemory(module, kWords * sizeof(uint64_t)), [](const Error&) {},
      &waiting);
  auto& receives =
      proxy.addQueue(link, receiveRing, StagingProxy::Direction::kReceive);
  auto& sends = proxy.addQueue(link, sendRing, StagingProxy::Direction::kSend);
  // All-reduce #4 receives 3 pieces through 2 slots.
  for (uint32_t i = 0; i < 3; ++i) {
    StagingProxy::Job job{&receives,   i, 64, 0, receiveRing.slotFor(i, 64),
                          allReduce(4)};
    job.ofTransfer = {i, 3};
    proxy.post(job);
  }
  WaitingCall::Stall stall = markedWait(
      waiting, [](const auto& s) { return at(s, EngineStage::kNetwork, 0); });
  EXPECT_EQ(stall.sequence, 4u);
  EXPECT_EQ(stall.peer, 1);
  EXPECT_EQ(stall.leg.way, TransferWay::kReceive);
  EXPECT_EQ(stall.leg.pieces.total, 3u);
  link.finish(0);
  markedWait(waiting,
             [](const auto& s) { return at(s, EngineStage::kNetwork, 1); });
  // Piece 2 waits for the stream to copy piece 0 out of its slot.
  link.finish(1);
  stall = markedWait(waiting, [](const auto& s) {
    return at(s, EngineStage::kHostToDevice, 2);
  });
  EXPECT_EQ(stall.leg.way, TransferWay::kReceive);
  __atomic_store_n(receiveRing.streamCounter(), 1, __ATOMIC_RELEASE);
  markedWait(waiting,
             [](const auto& s) { return at(s, EngineStage::kNetwork, 2); });
  // All-reduce #5 sends a piece behind a gate its stream has not reached:
  // the older receive is still the wait.
  StagingProxy::Job send{&sends,      0, 64, 10, sendRing.slotFor(0, 64),
                         allReduce(5)};
  proxy.post(send);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  stall = markedWait(waiting, [](const auto&) { return true; });
  EXPECT_EQ(stall.sequence, 4u);
  link.finish(2);
  stall = markedWait(waiting, [](const auto& s) {
    return at(s, EngineStage::kStreamNotThere, 0);
  });
  EXPECT_EQ(stall.sequence, 5u);
  EXPECT_EQ(stall.leg.way, TransferWay::kSend);
  EXPECT_EQ(stall.leg.pieces.total, 1u);
  __atomic_store_n(&gateWord, 10, __ATOMIC_RELEASE);
  markedWait(waiting, [](const auto& s) {
    return at(s, EngineStage::kDeviceToHost, 0);
  });
  __atomic_store_n(sendRing.streamCounter(), 1, __ATOMIC_RELEASE);
  stall = markedWait(
      waiting, [](const auto& s) { return at(s, EngineStage::kNetwork, 0); });
  EXPECT_EQ(stall.leg.way, TransferWay::kSend);
  link.finish(3);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (waiting.stalledFor(0) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_FALSE(waiting.stalledFor(0)) << "a wait is marked once all is done";
  EXPECT_EQ(link.posted(), 4u);
  // Where its time went counts every piece moved, each way.
  proxy.stop();
  const std::string occupancy = proxy.occupancy();
  EXPECT_NE(occupancy.find("sends 0.00 GB in 1 pieces: network"),
            std::string::npos)
      << occupancy;
  EXPECT_NE(occupancy.find("receives 0.00 GB in 3 pieces: network"),
            std::string::npos)
      << occupancy;
}

Op domainStep(OpKind kind, uint64_t sequence) {
  Op op;
  op.kind = kind;
  op.sequence = sequence;
  return op;
}

// All-reduce #5's plan: a reduce-scatter inside the domain, then a send
// of piece 0 across (its copy behind the reduce-scatter), then two more
// domain steps. The stream has not reached them yet.
void planOfFive(DomainStepLog& log, StagingProxy& proxy,
                StagingProxy::Queue& sends) {
  log.add({domainStep(OpKind::ReduceScatter, 5)});
  StagingProxy::Job send{&sends, 0, 64, 0, nullptr, allReduce(5)};
  send.domainStepsBefore = log.enqueued();
  proxy.post(send);
  log.add({domainStep(OpKind::AllReduce, 5)});
  log.add({domainStep(OpKind::AllGather, 5)});
  log.endLaunch();
}

// A piece whose copy the stream has not reached because the stream is
// inside a domain step waits inside the domain: the step, its place among
// the op's domain steps, and a rank of the domain (the vendor library
// knows which). Before the stream enters the step, and once it is past
// it, the piece's own stage.
TEST(StagingProxyWaits, BehindADomainStepSayTheStep) {
  const DeviceModule& module = emulatedDeviceModule();
  uint64_t gateWord = 0;
  WaitingCall waiting;
  HeldLink link;
  DomainStepLog log(module);
  StagingRings rings(module);
  StagingRing& sendRing = rings.make(64, 2, rings.linkCounters());
  StagingProxy proxy(
      std::make_shared<AbortSignal>(), /*timeoutSeconds=*/0, &gateWord,
      PinnedHostMemory(module, kWords * sizeof(uint64_t)), [](const Error&) {},
      &waiting, &log, /*domainMarksWaits=*/false);
  auto& sends = proxy.addQueue(link, sendRing, StagingProxy::Direction::kSend);
  planOfFive(log, proxy, sends);
  markedWait(waiting, [](const auto& s) {
    return at(s, EngineStage::kDeviceToHost, 0);
  });
  __atomic_store_n(log.word(), 1, __ATOMIC_RELEASE);  // inside step 1
  WaitingCall::Stall stall = markedWait(waiting, [](const auto& s) {
    return s.leg.kind == WaitLeg::Kind::kDomain;
  });
  EXPECT_EQ(stall.sequence, 5u);
  EXPECT_EQ(stall.peer, -1);
  EXPECT_STREQ(stall.leg.step, "reduceScatter");
  EXPECT_EQ(stall.leg.stepIndex, 1u);
  EXPECT_EQ(stall.leg.stepCount, 3u);
  EXPECT_EQ(stall.leg.stage, EngineStage::kNone);
  // The stream got past the reduce-scatter: the copy is what waits.
  __atomic_store_n(log.word(), 2, __ATOMIC_RELEASE);
  stall = markedWait(waiting, [](const auto& s) {
    return at(s, EngineStage::kDeviceToHost, 0);
  });
  EXPECT_EQ(stall.leg.kind, WaitLeg::Kind::kLink);
  EXPECT_EQ(stall.peer, 1);
  __atomic_store_n(sendRing.streamCounter(), 1, __ATOMIC_RELEASE);
  stall = markedWait(
      waiting, [](const auto& s) { return at(s, EngineStage::kNetwork, 0); });
  EXPECT_EQ(stall.leg.kind, WaitLeg::Kind::kLink);
  EXPECT_EQ(stall.sequence, 5u);
  link.finish(0);
}

// Where the domain's back-end marks its own waits (host collectives under
// emulated GPUs), its mark of the peer it waits for stands while the
// stream is in the domain step: the proxy neither replaces nor clears it.
TEST(StagingProxyWaits, LeaveADomainThatMarksItsWaitsToIt) {
  const DeviceModule& module = emulatedDeviceModule();
  uint64_t gateWord = 0;
  WaitingCall waiting;
  HeldLink link;
  DomainStepLog log(module);
  StagingRings rings(module);
  StagingRing& sendRing = rings.make(64, 2, rings.linkCounters());
  StagingProxy proxy(
      std::make_shared<AbortSignal>(), /*timeoutSeconds=*/0, &gateWord,
      PinnedHostMemory(module, kWords * sizeof(uint64_t)), [](const Error&) {},
      &waiting, &log, /*domainMarksWaits=*/true);
  auto& sends = proxy.addQueue(link, sendRing, StagingProxy::Direction::kSend);
  WaitLeg backend;
  backend.kind = WaitLeg::Kind::kDomain;
  backend.step = "its input of a collective";
  __atomic_store_n(log.word(), 1, __ATOMIC_RELEASE);  // inside step 1
  waiting.enter(5, /*peer=*/3, backend);
  planOfFive(log, proxy, sends);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::optional<WaitingCall::Stall> stall = waiting.stalledFor(0);
  ASSERT_TRUE(stall.has_value()) << "the proxy cleared the domain's wait";
  EXPECT_EQ(stall->peer, 3);
  EXPECT_STREQ(stall->leg.step, "its input of a collective");
  // Past the step, the proxy's own wait again.
  __atomic_store_n(log.word(), 2, __ATOMIC_RELEASE);
  markedWait(waiting, [](const auto& s) {
    return s.peer == 1 && at(s, EngineStage::kDeviceToHost, 0);
  });
  __atomic_store_n(sendRing.streamCounter(), 1, __ATOMIC_RELEASE);
  markedWait(waiting,
             [](const auto& s) { return at(s, EngineStage::kNetwork, 0); });
  link.finish(0);
}

// The steps of one op are numbered among themselves, each op's from 1,
// and learn their count once the op's plan is enqueued; a group of sends
// and receives is a step of its own.
TEST(DomainStepLogTest, NumbersEachOpsStepsAndCountsThem) {
  DomainStepLog log(emulatedDeviceModule());
  EXPECT_EQ(log.add({domainStep(OpKind::ReduceScatter, 7)}), 1u);
  EXPECT_EQ(log.add({domainStep(OpKind::AllGather, 7)}), 2u);
  ASSERT_TRUE(log.step(2).has_value());
  EXPECT_EQ(log.step(2)->count, 0u) << "op #7's plan is still enqueuing";
  EXPECT_EQ(log.add({domainStep(OpKind::Broadcast, 8)}), 3u);
  EXPECT_EQ(log.add({domainStep(OpKind::Send, 3), domainStep(OpKind::Recv, 3)}),
            4u);
  log.endLaunch();
  EXPECT_EQ(log.enqueued(), 4u);
  EXPECT_EQ(log.inside(), 0u);
  __atomic_store_n(log.word(), 5, __ATOMIC_RELEASE);
  EXPECT_EQ(log.inside(), 3u);
  __atomic_store_n(log.word(), 6, __ATOMIC_RELEASE);
  EXPECT_EQ(log.inside(), 0u);
  const auto first = log.step(1), second = log.step(2), third = log.step(3),
             fourth = log.step(4);
  ASSERT_TRUE(first && second && third && fourth);
  EXPECT_EQ(first->sequence, 7u);
  EXPECT_STREQ(first->name, "reduceScatter");
  EXPECT_EQ(first->index, 1u);
  EXPECT_EQ(first->count, 2u);
  EXPECT_EQ(second->index, 2u);
  EXPECT_EQ(second->count, 2u);
  EXPECT_EQ(third->sequence, 8u);
  EXPECT_EQ(third->index, 1u);
  EXPECT_EQ(third->count, 1u);
  EXPECT_EQ(fourth->sequence, 0u);
  EXPECT_STREQ(fourth->name, "sends and receives");
  EXPECT_FALSE(log.step(5).has_value());
  EXPECT_FALSE(log.step(0).has_value());
}

}  // namespace
}  // namespace hetccl