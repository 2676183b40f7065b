// The call probe's relay of waits (core/wait_relay.h), played between
// WaitRelay objects by hand: rank 2 waits for rank 0, which waits for a
// stopped rank 1; rank 0 tells rank 2, only once it was asked and only
// while it waits, again when the chain changes, and an empty chain once it
// waits no more. Rank 2's stall line and status file then name rank 1.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/stall_report.h"
#include "core/status_file.h"
#include "core/wait_relay.h"

namespace hetccl {
namespace {

// Four ranks, each in its own domain over tcp, on hosts nodeA..nodeD.
std::shared_ptr<WaitDescription> names(int domain) {
  std::vector<WaitDescription::Peer> peers;
  for (int r = 0; r < 4; ++r)
    peers.push_back({"rank " + std::to_string(r) + " (domain " +
                         std::to_string(r) + ", host node" +
                         std::string(1, static_cast<char>('A' + r)) + ", pid " +
                         std::to_string(40 + r) + ")",
                     r, r == domain ? "" : "tcp"});
  return std::make_shared<WaitDescription>(domain, "host collectives", peers,
                                           nullptr);
}

WaitingCall::Stall waitFor(int peer, uint64_t sequence = 5) {
  WaitLeg leg;
  leg.way = TransferWay::kReceive;
  leg.pieces = {0, 1};
  return WaitingCall::Stall{sequence, peer, 0.5, leg};
}

// Delivers `answers` from `from` to the relays by rank.
void deliver(int from, const std::vector<WaitRelay::Answer>& answers,
             std::vector<WaitRelay*> relays) {
  for (const WaitRelay::Answer& answer : answers)
    relays[answer.first]->heard(from, answer.second);
}

TEST(WaitRelay, EncodesAndDecodes) {
  const std::vector<uint8_t> body =
      WaitRelay::encode(0x123456789aULL, {1, 3}, "on its tcp link");
  const std::optional<RelayedWait> wait = WaitRelay::decode(0, body);
  ASSERT_TRUE(wait);
  EXPECT_EQ(wait->from, 0);
  EXPECT_EQ(wait->sequence, 0x123456789aULL);
  EXPECT_EQ(wait->chain, (std::vector<int>{1, 3}));
  EXPECT_EQ(wait->leg, "on its tcp link");
  EXPECT_FALSE(WaitRelay::decode(0, {1, 2, 3}));  // too short
  std::vector<uint8_t> wrongCount = body;
  wrongCount[8] = 200;
  EXPECT_FALSE(WaitRelay::decode(0, wrongCount));
  // A leg's words are cut to kMaxLegBytes.
  EXPECT_EQ(WaitRelay::encode(1, {1}, std::string(1000, 'x')).size(),
            9 + 4 + WaitRelay::kMaxLegBytes);
}

TEST(WaitRelay, SaysNothingUnaskedOrWhileNotWaiting) {
  WaitRelay zero(0, 4);
  const auto description = names(0);
  EXPECT_TRUE(zero.answers(waitFor(1), 5, *description).empty());
  zero.asked(2, 5);
  EXPECT_TRUE(zero.answers(std::nullopt, 5, *description).empty());
  // Waiting for the asker itself: the asker knows.
  EXPECT_TRUE(zero.answers(waitFor(2), 5, *description).empty());
}

TEST(WaitRelay, TellsTheAskerOnceThenOnChangesAndWhenDone) {
  WaitRelay zero(0, 4), two(2, 4), three(3, 4), one(1, 4);
  std::vector<WaitRelay*> relays{&zero, &one, &two, &three};
  const auto description = names(0);
  zero.asked(2, 5);
  std::vector<WaitRelay::Answer> answers =
      zero.answers(waitFor(1), 5, *description);
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(answers[0].first, 2);
  deliver(0, answers, relays);
  ASSERT_EQ(two.relayed().count(0), 1u);
  const RelayedWait& wait = two.relayed().at(0);
  EXPECT_EQ(wait.sequence, 5u);
  EXPECT_EQ(wait.chain, std::vector<int>{1});
  EXPECT_EQ(wait.leg, "on its tcp link: 0 of 1 pieces received");
  // The same chain: nothing more.
  EXPECT_TRUE(zero.answers(waitFor(1), 5, *description).empty());
  // Rank 1 said it waits for rank 3: rank 0 passes it on.
  one.asked(0, 5);
  deliver(1, one.answers(waitFor(3), 5, *names(1)), relays);
  answers = zero.answers(waitFor(1), 5, *description);
  ASSERT_EQ(answers.size(), 1u);
  deliver(0, answers, relays);
  EXPECT_EQ(two.relayed().at(0).chain, (std::vector<int>{1, 3}));
  // Rank 0 waits no more: an empty chain clears what rank 2 holds.
  answers = zero.answers(std::nullopt, 5, *description);
  ASSERT_EQ(answers.size(), 1u);
  deliver(0, answers, relays);
  EXPECT_EQ(two.relayed().count(0), 0u);
  EXPECT_TRUE(zero.answers(std::nullopt, 5, *description).empty());
}

TEST(WaitRelay, ForgetsAnAskerWhoseCallItPassed) {
  WaitRelay zero(0, 4), two(2, 4);
  std::vector<WaitRelay*> relays{&zero, nullptr, &two, nullptr};
  const auto description = names(0);
  zero.asked(2, 5);
  deliver(0, zero.answers(waitFor(1), 5, *description), relays);
  ASSERT_EQ(two.relayed().count(0), 1u);
  // Rank 0 made call #6: rank 2 hears an empty chain once, then nothing.
  deliver(0, zero.answers(waitFor(1, 6), 6, *description), relays);
  EXPECT_EQ(two.relayed().count(0), 0u);
  EXPECT_TRUE(zero.answers(waitFor(1, 6), 6, *description).empty());
}

TEST(WaitRelay, CutsCyclesAndTheAsker) {
  // 0 waits for 1, which said it waits for 3, then 0, then 2.
  WaitRelay zero(0, 4), two(2, 4);
  std::vector<WaitRelay*> relays{&zero, nullptr, &two, nullptr};
  zero.heard(1, WaitRelay::encode(5, {3, 0, 2}, ""));
  EXPECT_EQ(zero.relayed().at(1).chain, (std::vector<int>{3, 0, 2}));
  zero.asked(2, 5);
  deliver(0, zero.answers(waitFor(1), 5, *names(0)), relays);
  EXPECT_EQ(two.relayed().at(0).chain, (std::vector<int>{1, 3}));
  // A rank out of range is refused.
  two.heard(3, WaitRelay::encode(5, {9}, ""));
  EXPECT_EQ(two.relayed().count(3), 0u);
}

// Rank 2's stall line and status file, once rank 0 said it waits for 1.
TEST(WaitRelay, TheStallLineAndTheStatusFileNameTheEndOfTheChain) {
  auto calls = std::make_shared<CallLog>();
  CallSignature call{};
  call.call = OpKind::AllReduce;
  call.sequence = 5;
  call.count = 1;
  call.dtype = ncclInt64;
  call.redOp = ncclSum;
  calls->record(call);
  WaitingCall waiting;
  waiting.enter(5, 0, WaitingCall::Clock::now() - std::chrono::seconds(2));
  RelayedWaits relayed;
  relayed[0] = RelayedWait{0, 5, {1, 3}, "on its tcp link"};
  StallReport stalls(2, 1, names(2), calls);
  const std::optional<std::string> line = stalls.check(waiting, &relayed);
  ASSERT_TRUE(line);
  EXPECT_NE(line->find("for rank 0 (domain 0, host nodeA, pid 40) on its tcp "
                       "link; rank 0 itself waits for rank 1 (domain 1, host "
                       "nodeB, pid 41) on its tcp link; rank 1 in turn waits "
                       "for rank 3 (domain 3, host nodeD, pid 43); it waits"),
            std::string::npos)
      << *line;
  // A relay from another peer than the one waited for says nothing.
  RelayedWaits other;
  other[3] = RelayedWait{3, 5, {1}, ""};
  StallReport fresh(2, 1, names(2), calls);
  const std::optional<std::string> plain = fresh.check(waiting, &other);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->find("itself waits"), std::string::npos) << *plain;

  char dirTemplate[] = "/tmp/hetccl-relay-XXXXXX";
  ASSERT_NE(::mkdtemp(dirTemplate), nullptr);
  const std::string dir = dirTemplate;
  {
    StatusFile file(dir, StatusFile::Identity{"00ab", 2, 4, "nodeC", 42}, calls,
                    names(2));
    file.refresh(waiting, &relayed);
    std::ifstream in(file.path());
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_NE(text.str().find("\nwaiting 5 0 "), std::string::npos)
        << text.str();
    EXPECT_NE(text.str().find("\nwaiting_root 3\n"), std::string::npos)
        << text.str();
  }
  (void)std::system(("rm -rf " + dir).c_str());
}

}  // namespace
}  // namespace hetccl
