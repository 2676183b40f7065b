// Virtual time for hetccl-sim: the simulated ranks run HetCCL's real plan
// code, each as a fiber (a stack of its own on the one thread), one at a
// time. A rank runs until it waits (for a transfer, a domain step, a
// reduction's cost); the scheduler then moves the clock to the next event
// and switches to the rank that event wakes. A run is the same every
// time: events at the same time run in the order they were set.
#pragma once

#include <setjmp.h>
#include <ucontext.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <queue>
#include <vector>

namespace hetccl::sim {

class Scheduler {
 public:
  using Action = std::function<void()>;

  Scheduler() = default;
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // The virtual time, in seconds since the run began.
  double now() const { return now_; }
  // Runs `action` (outside every fiber) when the clock reaches `time`; a
  // time already past runs at the current time.
  void at(double time, Action action);

  // A fiber: a rank's body, started at the current time by run().
  int spawn(std::function<void()> body);
  // Runs every fiber to its end. Throws the first fiber's exception, or
  // std::runtime_error when fibers still wait and no event is left (the
  // plans are stuck).
  void run();

  // From inside a fiber: the fiber's number, and waiting.
  int current() const { return current_; }
  // Gives up the turn until resume(current()) runs.
  void suspend();
  // Makes a suspended fiber run again at the current time.
  void resume(int fiber);
  // Gives up the turn for `seconds` of virtual time.
  void sleepFor(double seconds);

 private:
  struct Fiber {
    std::function<void()> body;
    std::unique_ptr<char[]> stack;
    ucontext_t context;  // its first entry
    jmp_buf resumeAt;    // where it switched out
    bool started = false;
    bool finished = false;
    void* fakeStack = nullptr;  // AddressSanitizer's, while switched out
  };
  struct Event {
    double time;
    uint64_t order;
    Action action;
    bool operator>(const Event& other) const {
      return time != other.time ? time > other.time : order > other.order;
    }
  };
  struct Stop {};  // unwinds a fiber when the run ends early

  static void entry(unsigned high, unsigned low);
  void fiberMain();
  // From the scheduler: runs `fiber` until it suspends or ends.
  void switchTo(int fiber);
  // From a fiber: back to the scheduler.
  void switchOut(bool finishing);
  void stopAll();

  double now_ = 0;
  uint64_t order_ = 0;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  std::vector<std::unique_ptr<Fiber>> fibers_;
  ucontext_t schedulerContext_;  // left behind by a fiber's first entry
  jmp_buf schedulerResumeAt_;
  int current_ = -1;  // the running fiber; -1: the scheduler
  bool stopping_ = false;
  std::exception_ptr error_;
  // What AddressSanitizer is told of the stack switches (scheduler.cc).
  void* schedulerFakeStack_ = nullptr;
  const void* schedulerStackBottom_ = nullptr;
  size_t schedulerStackSize_ = 0;
};

}  // namespace hetccl::sim
