// What the two-process bandwidth tools share (link-bandwidth,
// net-plugin-bandwidth): ranks forked from one parent before any touches a
// transport or plugin, which meet through the parent: it relays their
// out-of-band all-gathers over a socketpair per rank.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "util/oob.h"
#include "util/owned_fd.h"

namespace hetccl::bench {

// A rank's out-of-band channel: a socketpair to the parent, which gathers
// every rank's slot and hands each the whole row.
class RelayOob : public Oob {
 public:
  RelayOob(int rank, int nranks, OwnedFd fd)
      : rank_(rank), nranks_(nranks), fd_(std::move(fd)) {}
  int rank() const override { return rank_; }
  int nranks() const override { return nranks_; }
  void allGather(void* data, size_t bytesPerRank) override;
  void barrier() override;

 private:
  const int rank_;
  const int nranks_;
  OwnedFd fd_;
};

// Forks `nranks` processes, each running `rank(oob)` and exiting 0, or 1
// after printing "TOOL: rank R: WHY" for what it threw; the parent relays
// their exchanges until all have closed them. 0 when every rank exited 0.
int runForkedRanks(const char* tool, int nranks,
                   const std::function<void(RelayOob& oob)>& rank);

// The slowest rank's seconds: a run is done when every rank is.
double slowestOf(Oob& oob, double seconds);

// A positive size ("4M", "1G", "4096"); throws ncclInvalidArgument naming
// `tool` otherwise.
size_t sizeValue(const char* tool, const std::string& text);

}  // namespace hetccl::bench
