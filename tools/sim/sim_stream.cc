#include "sim_stream.h"

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
