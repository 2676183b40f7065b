// What a rank's body gets: who it is, the unique id, and a side channel
// (files in a temp dir shared by the run) for comparing results across ranks
// without trusting the library under test.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "nccl.h"

namespace hetccl::mp {

class RankContext {
 public:
  RankContext(int rank, int nranks, const ncclUniqueId& id, std::string tempDir,
              double timeoutSeconds);

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  const ncclUniqueId& id() const { return id_; }
  const std::string& tempDir() const { return tempDir_; }

  // Every rank passes its bytes; every rank gets all ranks' bytes, indexed
  // by rank. All ranks must call it the same number of times.
  std::vector<std::string> exchange(const std::string& mine);
  void barrier();

  // Fails the rank (with `describe(i)` for the first differing index i)
  // unless every rank passed the same vector.
  void checkSameOnAllRanks(
      const std::vector<uint64_t>& values,
      const std::function<std::string(size_t index)>& describe);

  // ncclCommInitRank(nranks, id, rank) with MP_CHECK_NCCL.
  ncclComm_t initComm() const;

  // A fresh id from rank 0's ncclGetUniqueId, for another communicator.
  // All ranks must call it together.
  ncclUniqueId shareNewUniqueId();

 private:
  int rank_;
  int nranks_;
  ncclUniqueId id_;
  std::string tempDir_;
  double timeoutSeconds_;
  int exchangeCount_ = 0;
};

}  // namespace hetccl::mp
