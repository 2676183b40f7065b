#include "sim_stream.h"

#include <memory>
#include <utility>

namespace hetccl::sim {

SimStream::SimStream(Scheduler& scheduler) : scheduler_(scheduler) {
  fiber_ = scheduler_.spawn([this] { run(); });
}

void SimStream::enqueue(Task task) {
  tasks_.push_back(std::move(task));
  if (!idle_) return;
  idle_ = false;
  scheduler_.resume(fiber_);
}

void SimStream::follow(SimStream& other) {
  struct Mark {
    bool reached = false;
    int waiter = -1;
  };
  auto mark = std::make_shared<Mark>();
  other.enqueue([this, mark] {
    mark->reached = true;
    if (mark->waiter >= 0) scheduler_.resume(std::exchange(mark->waiter, -1));
  });
  enqueue([this, mark] {
    while (!mark->reached) {
      mark->waiter = scheduler_.current();
      scheduler_.suspend();
    }
  });
}

void SimStream::close() {
  closed_ = true;
  if (!idle_) return;
  idle_ = false;
  scheduler_.resume(fiber_);
}

void SimStream::run() {
  for (;;) {
    while (tasks_.empty()) {
      if (closed_) {
        finishedAt_ = scheduler_.now();
        return;
      }
      idle_ = true;
      scheduler_.suspend();
    }
    Task task = std::move(tasks_.front());
    tasks_.pop_front();
    task();
  }
}

}  // namespace hetccl::sim
