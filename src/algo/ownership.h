// How a buffer is shared out for the steps across domains. Inside domain d
// (of size s) a reduce-scatter leaves local rank i owning elements
// [i*base, (i+1)*base) of a chunk of n elements, base = n / s; the last
// local rank also owns the tail that does not divide evenly. Cutting the
// chunk at every domain's boundaries gives pieces that have exactly one
// owner in each domain; the owners of a piece exchange it across domains.
#pragma once

#include <cstddef>
#include <vector>

#include "algo/domains.h"

namespace hetccl {

struct ElementRange {
  size_t begin;
  size_t end;
  size_t size() const { return end - begin; }
};

// The range local rank `localRank` of a domain of `domainSize` owns.
ElementRange ownedRange(size_t n, int domainSize, int localRank);

struct Piece {
  ElementRange range;
  std::vector<int> owners;  // per domain: the global rank owning the piece
  int reducerDomain;        // the one domain that combines the piece
};

// Pieces in ascending order. Each stretch with one set of owners is cut
// into one part per domain, reduced by that domain, so that every domain
// combines its share.
std::vector<Piece> crossDomainPieces(size_t n, const DomainMap& domains);

}  // namespace hetccl
