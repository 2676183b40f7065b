// The host domain's collectives over shared memory. Work is cut into rounds
// of at most one staging buffer; each round has up to three phases:
//   1. every rank copies its share of the round's input into its buffer;
//   2. every rank reads what it needs of all inputs (reducing its own slice,
//      or copying), and may fill its output buffer;
//   3. every rank copies what it needs of all outputs.
// Each phase ends by posting the round number on one of the rank's flags
// (ready, done, freed); a buffer half is rewritten two rounds later, only
// after every rank posted that it has finished reading it. Each element is
// reduced by exactly one rank, in rank order, so every rank ends up with
// bitwise the same result.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "domain/host/shm_world.h"
#include "op/op.h"
#include "runtime/host/host_reduce.h"
#include "runtime/host/memory_workers.h"

namespace hetccl {

class HostCollectives {
 public:
  // `workers` run the large copies and reductions of the collectives (not
  // of point-to-point transfers, which progress from several streams).
  HostCollectives(ShmWorld& world, MemoryWorkers& workers);
  // Runs one group's ops: collectives in call order, then the group's
  // point-to-point ops together. Safe to call from several streams at
  // once: collectives run one at a time, and point-to-point ops of
  // different peers and directions progress side by side, as they do on a
  // GPU where each stream runs its own kernels.
  void run(const std::vector<Op>& ops);

 private:
  // One round's part of a collective's buffers (host_collectives.cc).
  struct Round;

  void runCollective(const Op& op);
  // A domain of one rank: the collective is its input, no staging.
  void runAlone(const Op& op);
  void allReduce(const Op& op);
  void reduce(const Op& op);
  void reduceRounds(const Op& op, bool everyRankReceives);
  void reduceWhole(const Op& op, const Round& round, bool receives);
  void reduceBySlices(const Op& op, const Round& round, bool receives);
  void reduceScatter(const Op& op);
  void allGather(const Op& op);
  void gather(const Op& op);
  void broadcast(const Op& op);
  void scatter(const Op& op);
  void allToAll(const Op& op);
  void sendRecv(const std::vector<const Op*>& ops);

  // Runs body(round) for each round of at most `perRound` elements of
  // every block of `op`'s buffers.
  template <typename Body>
  void forEachRound(const Op& op, size_t perRound, Body body);

  // Round bookkeeping shared by all collectives.
  uint64_t beginRound();
  void guardInput(uint64_t round);   // every rank finished reading round-2
  void guardOutput(uint64_t round);  // every rank finished reading outputs
  void postReady(uint64_t round);
  void postDone(uint64_t round);
  void postFreed(uint64_t round);
  void endRound(uint64_t round);  // done and freed at once
  void waitAllReady(uint64_t round);
  void waitAllDone(uint64_t round);

  // Phase 1 of a round: stages this rank's part of the round in its input
  // buffer (once it is free again) and posts it ready. publishPieces
  // stages this round's piece of each block, for the rank of that block;
  // without `includingOwn`, not its own, which it reads from its send
  // buffer.
  void publishInput(const Round& round);
  void publishPieces(const Round& round, bool includingOwn);

  // Reduces n elements of the round's inputs into dst: this rank's from
  // `own` (its send buffer), every other rank's from its input buffer at
  // byte `stagedAt`.
  void reduceStaged(const Op& op, uint64_t round, const char* own,
                    size_t stagedAt, size_t n, char* dst);
  size_t elementsPerBuffer(const Op& op) const;
  // Elements per block in rounds that stage a piece of every block.
  size_t elementsPerPiece(const Op& op) const;

  ShmWorld& world_;
  MemoryWorkers& workers_;
  std::mutex collectiveMutex_;
  // One lock per peer and direction guards that channel's chunk counter.
  std::unique_ptr<std::mutex[]> sendLocks_;
  std::unique_ptr<std::mutex[]> receiveLocks_;
  int rank_;
  int nranks_;
  uint64_t round_ = 0;
  uint64_t collectives_ = 0;  // run so far: each one's number on the board
  size_t directReduceMax_;    // below this, every rank reduces whole rounds
  std::vector<uint64_t> sentChunks_;      // per peer
  std::vector<uint64_t> receivedChunks_;  // per peer
  std::vector<const void*> sources_;      // scratch for reductions
};

}  // namespace hetccl
