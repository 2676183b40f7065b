// How a chunk is shared out across domains (algo/ownership.h): the
// stretches with one owner per domain, which the reduce sends to the
// root's domain, and the pieces, which the all-reduce spreads over the
// domains to combine.
#include "algo/ownership.h"

#include <gtest/gtest.h>

#include "runtime/runtime.h"

namespace hetccl {
namespace {

// CPU ranks of one host labelled as `labels` says.
DomainMap domainsOf(const std::vector<int>& labels) {
  std::vector<RankPlacement> ranks;
  for (int label : labels)
    ranks.push_back({static_cast<int>(RuntimeKind::Host), label, 1});
  return DomainMap(ranks);
}

// The ranges of `cuts` tile [0, n) in order.
template <typename Cut>
void expectTiles(const std::vector<Cut>& cuts, size_t n) {
  size_t next = 0;
  for (const Cut& cut : cuts) {
    EXPECT_EQ(cut.range.begin, next);
    EXPECT_GT(cut.range.size(), 0u);
    next = cut.range.end;
  }
  EXPECT_EQ(next, n);
}

TEST(Ownership, DomainsOfOneSizeMeetTheirMatchingRanksOnly) {
  const DomainMap domains = domainsOf({0, 0, 0, 1, 1, 1});
  const std::vector<Stretch> stretches = ownerStretches(100, domains);
  expectTiles(stretches, 100);
  ASSERT_EQ(stretches.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(stretches[i].owners, (std::vector<int>{i, 3 + i}));
    const ElementRange owned = ownedRange(100, 3, i);
    EXPECT_EQ(stretches[i].range.begin, owned.begin);
    EXPECT_EQ(stretches[i].range.end, owned.end);
  }
}

// Domains of 3 and 2 ranks: each stretch lies within one range of each
// domain, so a rank meets only the ranks of the other domain whose ranges
// overlap its own.
TEST(Ownership, UnevenDomainsCutWhereEitherDomainsRangesEnd) {
  const DomainMap domains = domainsOf({0, 0, 0, 1, 1});
  const size_t n = 61;  // ranges 20, 20, 21 and 30, 31
  const std::vector<Stretch> stretches = ownerStretches(n, domains);
  expectTiles(stretches, n);
  ASSERT_EQ(stretches.size(), 4u);
  const std::vector<std::vector<int>> owners = {{0, 3}, {1, 3}, {1, 4}, {2, 4}};
  const std::vector<size_t> ends = {20, 30, 40, 61};
  for (size_t s = 0; s < stretches.size(); ++s) {
    EXPECT_EQ(stretches[s].owners, owners[s]) << "stretch " << s;
    EXPECT_EQ(stretches[s].range.end, ends[s]) << "stretch " << s;
  }
}

// Fewer elements than ranks: the last rank of each domain owns them all.
TEST(Ownership, ACountBelowTheDomainSizeIsTheLastRanks) {
  const DomainMap domains = domainsOf({0, 0, 0, 0, 1, 1});
  const std::vector<Stretch> stretches = ownerStretches(1, domains);
  ASSERT_EQ(stretches.size(), 1u);
  EXPECT_EQ(stretches[0].owners, (std::vector<int>{3, 5}));
  expectTiles(stretches, 1);
}

// Each stretch is cut once more into one part per domain, each reduced by
// that domain.
TEST(Ownership, PiecesSplitEveryStretchOverTheDomains) {
  const DomainMap domains = domainsOf({0, 0, 0, 1, 1});
  const size_t n = 61;
  const std::vector<Piece> pieces = crossDomainPieces(n, domains);
  expectTiles(pieces, n);
  const std::vector<Stretch> stretches = ownerStretches(n, domains);
  ASSERT_EQ(pieces.size(), 2 * stretches.size());
  for (size_t p = 0; p < pieces.size(); ++p) {
    const Stretch& stretch = stretches[p / 2];
    EXPECT_EQ(pieces[p].owners, stretch.owners);
    EXPECT_EQ(pieces[p].reducerDomain, static_cast<int>(p % 2));
    EXPECT_GE(pieces[p].range.begin, stretch.range.begin);
    EXPECT_LE(pieces[p].range.end, stretch.range.end);
  }
}

}  // namespace
}  // namespace hetccl
