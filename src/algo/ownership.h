// How a buffer is shared out for the steps across domains. Inside domain d
// (of size s) a reduce-scatter leaves local rank i owning elements
// [i*base, (i+1)*base) of a chunk of n elements, base = n / s; the last
// local rank also owns the tail that does not divide evenly. Cutting the
// chunk at every domain's boundaries gives pieces that have exactly one
// owner in each domain; the owners of a piece exchange it across domains.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
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

struct Stretch {
  ElementRange range;
  std::vector<int> owners;  // per domain: the global rank owning the stretch
};

// The chunk cut at every domain's boundaries, in ascending order: the
// longest stretches with one owner in each domain.
std::vector<Stretch> ownerStretches(size_t n, const DomainMap& domains);

struct Piece {
  ElementRange range;
  std::vector<int> owners;  // per domain: the global rank owning the piece
  int reducerDomain;        // the one domain that combines the piece
};

// Pieces in ascending order. Each stretch is cut into one part per domain,
// reduced by that domain, so that every domain combines its share.
std::vector<Piece> crossDomainPieces(size_t n, const DomainMap& domains);

// The stretches or pieces of each chunk that one rank owns in its domain:
// the only ones it sends or combines. Every chunk but the last has the
// same: they are cut once, not per chunk (the cut takes time in proportion
// to the communicator's ranks: about 0.4 ms per chunk at 1,024 ranks,
// hetccl-sim showed).
template <typename Cut>
class OwnCuts {
 public:
  using Shared = std::shared_ptr<const std::vector<Cut>>;
  // `cutAll(n)` cuts a chunk of n elements (ownerStretches or
  // crossDomainPieces); chunks are of `fullChunk` elements but the last.
  OwnCuts(std::function<std::vector<Cut>(size_t n)> cutAll, int domain,
          int rank, size_t fullChunk)
      : cutAll_(std::move(cutAll)),
        domain_(domain),
        rank_(rank),
        fullChunk_(fullChunk),
        full_(cut(fullChunk)) {}

  Shared of(size_t n) const { return n == fullChunk_ ? full_ : cut(n); }

 private:
  Shared cut(size_t n) const {
    std::vector<Cut> cuts = cutAll_(n);
    cuts.erase(std::remove_if(
                   cuts.begin(), cuts.end(),
                   [&](const Cut& c) { return c.owners[domain_] != rank_; }),
               cuts.end());
    return std::make_shared<const std::vector<Cut>>(std::move(cuts));
  }

  std::function<std::vector<Cut>(size_t n)> cutAll_;
  int domain_;
  int rank_;
  size_t fullChunk_;
  Shared full_;
};

}  // namespace hetccl
