// hetccl-info --status: status texts as the ranks write them
// (src/core/status_file.h), parsed and summed up.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "status_view.h"

namespace hetccl::info {
namespace {

constexpr double kNow = 1000;

// A rank's file text, written `age` seconds before kNow; `waiting`: the
// "waiting" line's value, or "" for none.
std::string statusText(int rank, int nranks, unsigned latest,
                       const std::string& waiting, double age = 0.5,
                       int waitingRoot = -1) {
  std::string text =
      "comm 00ab\nrank " + std::to_string(rank) + "\nnranks " +
      std::to_string(nranks) + "\nhost node" + std::to_string(rank) + "\npid " +
      std::to_string(100 + rank) + "\ntime " + std::to_string(kNow - age) +
      "\nlatest " + std::to_string(latest) +
      "\nlatest_op allReduce(1 x float32, sum)\n";
  if (!waiting.empty()) text += "waiting " + waiting + "\n";
  if (waitingRoot >= 0)
    text += "waiting_root " + std::to_string(waitingRoot) + "\n";
  return text;
}

std::vector<RankStatus> parseAll(const std::vector<std::string>& texts) {
  std::vector<RankStatus> ranks;
  for (const std::string& text : texts) {
    std::optional<RankStatus> status = parseStatus(text);
    EXPECT_TRUE(status) << text;
    if (status) ranks.push_back(*status);
  }
  return ranks;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(StatusView, ParsesEveryField) {
  std::optional<RankStatus> status =
      parseStatus(statusText(2, 3, 7, "7 1 2.5"));
  ASSERT_TRUE(status);
  EXPECT_EQ(status->comm, "00ab");
  EXPECT_EQ(status->rank, 2);
  EXPECT_EQ(status->nranks, 3);
  EXPECT_EQ(status->host, "node2");
  EXPECT_EQ(status->pid, 102);
  EXPECT_EQ(status->latest, 7u);
  EXPECT_EQ(status->latestOp, "allReduce(1 x float32, sum)");
  EXPECT_TRUE(status->waiting);
  EXPECT_EQ(status->waitingCall, 7u);
  EXPECT_EQ(status->waitingPeer, 1);
  EXPECT_DOUBLE_EQ(status->waitingSeconds, 2.5);
}

TEST(StatusView, ParsesTheRootOfAChainOfWaits) {
  std::optional<RankStatus> status =
      parseStatus(statusText(2, 4, 7, "7 0 2.5", 0.5, 1));
  ASSERT_TRUE(status);
  EXPECT_EQ(status->waitingPeer, 0);
  EXPECT_EQ(status->waitingRoot, 1);
  EXPECT_EQ(parseStatus(statusText(2, 4, 7, "7 0 2.5"))->waitingRoot, -1);
}

TEST(StatusView, RefusesOtherTexts) {
  EXPECT_FALSE(parseStatus("hello world\n"));
  EXPECT_FALSE(parseStatus("comm 00ab\nrank 3\nnranks 3\n"));  // rank too big
  EXPECT_FALSE(parseStatus("rank 0\nnranks 1\n"));             // no comm
}

// Ranks 0 and 2 wait for rank 1, which made one call fewer and waits for
// nobody: rank 1 is behind and the root.
TEST(StatusView, NamesTheRankOthersWaitFor) {
  const std::string summary = summarizeStatus(
      parseAll({statusText(0, 3, 2, "2 1 2.4"), statusText(1, 3, 1, ""),
                statusText(2, 3, 2, "2 1 2.3")}),
      kNow);
  EXPECT_TRUE(contains(summary,
                       "rank 0 (host node0, pid 100): latest call #2 "
                       "allReduce(1 x float32, sum); waits for rank 1 "
                       "in call #2 for 2.4 s"))
      << summary;
  EXPECT_TRUE(contains(summary, "behind: rank(s) 1 (at call #1")) << summary;
  EXPECT_TRUE(contains(summary,
                       "most likely at the root of the stall: rank 1 (host "
                       "node1, pid 101): rank(s) 0, 2 wait for it; it waits "
                       "for nobody"))
      << summary;
}

// A rank whose file stopped moving is the prime suspect even though its
// last word was a wait of its own.
TEST(StatusView, PrefersAStaleRankOthersWaitFor) {
  const std::string summary = summarizeStatus(
      parseAll({statusText(0, 3, 5, "5 2 30"), statusText(1, 3, 5, "5 0 1"),
                statusText(2, 3, 5, "5 1 1", 30)}),
      kNow);
  EXPECT_TRUE(contains(summary,
                       "rank 2 (host node2, pid 102): latest call #5 "
                       "allReduce(1 x float32, sum); waits for rank 1 "
                       "in call #5 for 1.0 s; STALE"))
      << summary;
  EXPECT_TRUE(contains(summary, "behind: none (every rank at call #5)"))
      << summary;
  EXPECT_TRUE(contains(summary,
                       "most likely at the root of the stall: rank 2 (host "
                       "node2, pid 102): rank(s) 0 wait for it; its file is "
                       "stale"))
      << summary;
}

// Ranks 2 and 3 wait for rank 0, which waits for rank 1; rank 1, stopped
// a moment ago in a wait for rank 0, has a fresh file still: what rank 0
// told ranks 2 and 3 (waiting_root 1) names rank 1, not a ring.
TEST(StatusView, NamesTheRankChainsOfWaitsEndAt) {
  const std::string summary = summarizeStatus(
      parseAll({statusText(0, 4, 5, "5 1 2"), statusText(1, 4, 5, "5 0 2"),
                statusText(2, 4, 5, "5 0 2", 0.5, 1),
                statusText(3, 4, 5, "5 0 2", 0.5, 1)}),
      kNow);
  EXPECT_TRUE(contains(summary,
                       "rank 2 (host node2, pid 102): latest call #5 "
                       "allReduce(1 x float32, sum); waits for rank 0 in call "
                       "#5 for 2.0 s; that rank waits in turn, and the chain "
                       "ends at rank 1"))
      << summary;
  EXPECT_TRUE(contains(summary,
                       "most likely at the root of the stall: rank 1 (host "
                       "node1, pid 101): rank(s) 0 wait for it; rank(s) 2, 3 "
                       "wait for it through the rank(s) they wait for\n"))
      << summary;
}

// Waits in a ring name no rank that waits for nobody: the one furthest
// behind is named.
TEST(StatusView, FallsBackToTheRankFurthestBehind) {
  const std::string summary = summarizeStatus(
      parseAll({statusText(0, 2, 4, "4 1 3"), statusText(1, 2, 3, "3 0 3")}),
      kNow);
  EXPECT_TRUE(contains(summary,
                       "most likely at the root of the stall: rank 1 (host "
                       "node1, pid 101): it made the fewest calls"))
      << summary;
}

TEST(StatusView, SaysWhenNothingWaitsAndWhoseFileIsMissing) {
  const std::string summary = summarizeStatus(
      parseAll({statusText(0, 3, 4, ""), statusText(2, 3, 4, "")}), kNow);
  EXPECT_TRUE(contains(summary, "communicator 00ab: 3 ranks, 2 status files"))
      << summary;
  EXPECT_TRUE(contains(summary, "no file from rank(s) 1")) << summary;
  EXPECT_TRUE(contains(summary, "no rank waits: no stall seen")) << summary;
  EXPECT_EQ(summarizeStatus({}, kNow), "no status files\n");
}

}  // namespace
}  // namespace hetccl::info
