// A simulated GPU rank's stream. The GPU engine's plan only enqueues: its
// domain steps, copies and reductions, the sends of data earlier work
// produces, and its waits for transfers run on the rank's stream, one
// after another, while the plan goes on enqueuing the next chunk. A
// simulated GPU rank does the same: its plan hands each of those to its
// SimStream, whose fiber runs them in order in virtual time. (A CPU rank's
// plan runs them itself, waiting as it goes.)
#pragma once

#include <deque>
#include <functional>

#include "scheduler.h"

namespace hetccl::sim {

class SimStream {
 public:
  using Task = std::function<void()>;

  // Spawns the stream's fiber, which waits for work.
  explicit SimStream(Scheduler& scheduler);

  // Runs `task` on the stream once everything enqueued before has run.
  void enqueue(Task task);
  // What is enqueued next runs once `other` has also run everything
  // enqueued on it so far (an event recorded there and waited for here).
  void follow(SimStream& other);
  // Nothing more comes: the fiber ends once the last task has run.
  void close();
  // When the last task ended (valid once the run is over).
  double finishedAt() const { return finishedAt_; }

 private:
  void run();

  Scheduler& scheduler_;
  std::deque<Task> tasks_;
  int fiber_ = -1;
  bool idle_ = false;  // suspended for want of a task
  bool closed_ = false;
  double finishedAt_ = 0;
};

}  // namespace hetccl::sim
