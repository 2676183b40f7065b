// An Oob for ranks that are threads of one process: they meet in an
// InProcessWorld, whose all-gathers fill a shared table. The last rank to
// arrive publishes the table and releases the others.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "util/oob.h"

namespace hetccl {

class InProcessWorld {
 public:
  using GatherHook = std::function<void(const uint8_t*, size_t)>;

  explicit InProcessWorld(int nranks) : nranks_(nranks) {}
  int nranks() const { return nranks_; }

  // Runs once, on the first all-gather's result, before any rank returns
  // (lets a test act while every rank is known to be waiting).
  void setFirstGatherHook(GatherHook hook) { hook_ = std::move(hook); }

  // Blocks until every rank arrived; fails after 20 s.
  void allGather(int rank, void* data, size_t bytesPerRank);

 private:
  const int nranks_;
  std::mutex mutex_;
  std::condition_variable released_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
  std::vector<uint8_t> filling_;
  std::vector<uint8_t> result_;  // of the last completed all-gather
  GatherHook hook_;
};

class InProcessOob : public Oob {
 public:
  InProcessOob(InProcessWorld& world, int rank) : world_(world), rank_(rank) {}
  int rank() const override { return rank_; }
  int nranks() const override { return world_.nranks(); }
  void allGather(void* data, size_t bytesPerRank) override {
    world_.allGather(rank_, data, bytesPerRank);
  }
  void barrier() override { world_.allGather(rank_, nullptr, 0); }

 private:
  InProcessWorld& world_;
  const int rank_;
};

}  // namespace hetccl
