// The out-of-band exchange among a subset of a communicator's ranks (the
// members of one domain), over the communicator's bootstrap.
#pragma once

#include <cstdint>
#include <vector>

#include "util/oob.h"

namespace hetccl {

class Bootstrap;

class SubsetOob : public Oob {
 public:
  // `members` are bootstrap ranks, ascending, and include this rank.
  // `tagSpace` keeps this subset's messages apart from the whole
  // communicator's and from other subsets'; it must be the same on every
  // member and different for every subset.
  SubsetOob(Bootstrap& bootstrap, std::vector<int> members, uint32_t tagSpace);

  int rank() const override { return rank_; }
  int nranks() const override { return static_cast<int>(members_.size()); }
  void allGather(void* data, size_t bytesPerRank) override;
  void barrier() override;

 private:
  uint32_t nextTag() { return tagSpace_ | nextTag_++; }

  Bootstrap& bootstrap_;
  std::vector<int> members_;
  int rank_;
  uint32_t tagSpace_;
  uint32_t nextTag_ = 0;
};

}  // namespace hetccl
