// The domain steps of a GPU engine whose domain has several GPUs, for the
// stall reports, with HETCCL_STALL_STEPS (a few microseconds per step on a
// real GPU) or where the domain's back-end marks its own waits: each step (one
// vendor-library launch of a plan, e.g. an op's reduce-scatter inside the
// domain) is numbered from 1 as the plan enqueues it, and the engine's stream
// writes into a pinned host word 2n - 1 as it enters step n and 2n once past it
// (two stream memory operations per step: one word written after the step alone
// could not tell a stream inside the step from one still before it, waiting for
// a transfer). A staged piece remembers how many steps were enqueued before its
// stream work; while the stream is inside a step that is not before the piece's
// work, the piece waits for the domain, not for its link peer (StagingProxy
// marks that wait). A domain of one GPU has no log: its steps are local copies,
// which wait for no peer.
//
// The plan thread adds steps (under the engine's launch mutex); the
// proxy's thread reads the word (one atomic load per pass) and, only for
// the wait it marks, a step's description, under a mutex.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include "op/executor.h"
#include "op/op.h"
#include "runtime/device/device_resources.h"

namespace hetccl {

class DomainStepLog {
 public:
  struct Step {
    uint64_t sequence = 0;  // its op's (Op::sequence); 0: sends/receives
    const char* name = "";  // "reduceScatter"; static storage
    uint16_t index = 0;     // among its op's domain steps, from 1
    uint16_t count = 0;     // of them; 0 while its plan is enqueuing
  };

  // `module` pins the word.
  explicit DomainStepLog(const DeviceModule& module);
  DomainStepLog(const DomainStepLog&) = delete;
  DomainStepLog& operator=(const DomainStepLog&) = delete;

  // Plan thread: `ops`, one launch on the domain communicator, are being
  // enqueued; returns their step's number n (the stream is to write
  // 2n - 1 into word() before them, 2n after them).
  uint64_t add(const std::vector<Op>& ops);
  // Plan thread: the launch's plans are enqueued, so are the counts of
  // its ops' steps.
  void endLaunch();
  // Plan thread: the steps added so far.
  uint64_t enqueued() const { return enqueued_; }

  // The word the stream raises (pinned host memory).
  uint64_t* word() const { return word_; }
  // Any thread: the step the stream is inside now (0: none).
  uint64_t inside() const {
    const uint64_t word = __atomic_load_n(word_, __ATOMIC_ACQUIRE);
    return (word & 1) != 0 ? (word + 1) / 2 : 0;
  }
  // Any thread: step `number`, unless it is too far back to remember.
  std::optional<Step> step(uint64_t number) const;

 private:
  static constexpr size_t kRemembered = 256;
  struct Entry {
    uint64_t number = 0;  // 0: none
    Step step;
  };
  // Under the mutex: the steps since runStart_ belong to one op; they
  // learn their count.
  void closeRun();

  PinnedHostMemory memory_;
  uint64_t* word_;
  uint64_t enqueued_ = 0;  // the plan thread's
  uint64_t runStart_ = 1;  // the first step of the latest op
  mutable std::mutex mutex_;
  std::array<Entry, kRemembered> entries_{};
};

// A domain communicator whose launches are numbered in `log`, the stream
// writing into its word as it enters and leaves each one.
class LoggedDomainSteps : public Executor {
 public:
  LoggedDomainSteps(const DeviceModule& module, Executor& steps,
                    DomainStepLog& log)
      : module_(module), steps_(steps), log_(log) {}
  void launch(const std::vector<Op>& ops, StreamHandle stream) override;
  bool drain(double timeoutSeconds) override {
    return steps_.drain(timeoutSeconds);
  }

 private:
  const DeviceModule& module_;
  Executor& steps_;
  DomainStepLog& log_;
};

}  // namespace hetccl
