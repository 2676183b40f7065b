#include "algo/ownership.h"

#include <algorithm>

namespace hetccl {

ElementRange ownedRange(size_t n, int domainSize, int localRank) {
  size_t base = n / static_cast<size_t>(domainSize);
  size_t begin = base * static_cast<size_t>(localRank);
  size_t end = localRank == domainSize - 1 ? n : begin + base;
  return {begin, end};
}

std::vector<Stretch> ownerStretches(size_t n, const DomainMap& domains) {
  std::vector<size_t> cuts = {0, n};
  for (int d = 0; d < domains.count(); ++d) {
    int size = static_cast<int>(domains.members(d).size());
    for (int i = 1; i < size; ++i) cuts.push_back(ownedRange(n, size, i).begin);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::vector<Stretch> stretches;
  for (size_t c = 0; c + 1 < cuts.size(); ++c) {
    std::vector<int> owners;
    for (int d = 0; d < domains.count(); ++d) {
      const std::vector<int>& members = domains.members(d);
      int size = static_cast<int>(members.size());
      int owner = 0;
      while (ownedRange(n, size, owner).end <= cuts[c]) ++owner;
      owners.push_back(members[owner]);
    }
    stretches.push_back({{cuts[c], cuts[c + 1]}, std::move(owners)});
  }
  return stretches;
}

// Domain j reduces part j of each stretch, so that every domain combines
// its share whatever the domain sizes.
std::vector<Piece> crossDomainPieces(size_t n, const DomainMap& domains) {
  const int count = domains.count();
  std::vector<Piece> pieces;
  for (const Stretch& stretch : ownerStretches(n, domains)) {
    for (int part = 0; part < count; ++part) {
      ElementRange range = ownedRange(stretch.range.size(), count, part);
      if (range.size() == 0) continue;
      pieces.push_back(
          {{stretch.range.begin + range.begin, stretch.range.begin + range.end},
           stretch.owners,
           part});
    }
  }
  return pieces;
}

}  // namespace hetccl
