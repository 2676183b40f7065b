#include "scheduler.h"

#include <stdexcept>
#include <string>

#if defined(__SANITIZE_ADDRESS__)
#define HETCCL_SIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HETCCL_SIM_ASAN 1
#endif
#endif
#ifdef HETCCL_SIM_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace hetccl::sim {
namespace {

// Plans, logging and the standard library need little; AddressSanitizer's
// frames are larger. Only the pages a fiber touches are ever backed.
constexpr size_t kStackBytes = size_t{512} << 10;

// AddressSanitizer must hear of every switch between stacks, or it takes
// one fiber's frames for another's (a no-op without it).
void startSwitch(void** fakeStackSave, const void* bottom, size_t size) {
#ifdef HETCCL_SIM_ASAN
  __sanitizer_start_switch_fiber(fakeStackSave, bottom, size);
#else
  (void)fakeStackSave, (void)bottom, (void)size;
#endif
}

void finishSwitch(void* fakeStack, const void** oldBottom, size_t* oldSize) {
#ifdef HETCCL_SIM_ASAN
  __sanitizer_finish_switch_fiber(fakeStack, oldBottom, oldSize);
#else
  (void)fakeStack, (void)oldBottom, (void)oldSize;
#endif
}

}  // namespace

Scheduler::~Scheduler() { stopAll(); }

void Scheduler::at(double time, Action action) {
  events_.push({time < now_ ? now_ : time, order_++, std::move(action)});
}

int Scheduler::spawn(std::function<void()> body) {
  const int id = static_cast<int>(fibers_.size());
  auto fiber = std::make_unique<Fiber>();
  fiber->body = std::move(body);
  fiber->stack.reset(new char[kStackBytes]);
  getcontext(&fiber->context);
  fiber->context.uc_stack.ss_sp = fiber->stack.get();
  fiber->context.uc_stack.ss_size = kStackBytes;
  fiber->context.uc_link = nullptr;  // a fiber's end switches out itself
  // makecontext passes ints: the scheduler's address in two halves.
  const auto self = reinterpret_cast<uintptr_t>(this);
  makecontext(&fiber->context, reinterpret_cast<void (*)()>(&Scheduler::entry),
              2, static_cast<unsigned>(self >> 32),
              static_cast<unsigned>(self & 0xffffffffu));
  fibers_.push_back(std::move(fiber));
  at(now_, [this, id] { switchTo(id); });
  return id;
}

void Scheduler::entry(unsigned high, unsigned low) {
  auto* scheduler = reinterpret_cast<Scheduler*>(
      (static_cast<uintptr_t>(high) << 32) | static_cast<uintptr_t>(low));
  scheduler->fiberMain();
}

void Scheduler::fiberMain() {
  finishSwitch(nullptr, &schedulerStackBottom_, &schedulerStackSize_);
  Fiber& fiber = *fibers_[current_];
  if (!stopping_) {
    try {
      fiber.body();
    } catch (const Stop&) {
    } catch (...) {
      if (!error_) error_ = std::current_exception();
    }
  }
  fiber.finished = true;
  switchOut(true);  // never comes back
}

void Scheduler::run() {
  while (!events_.empty() && !error_) {
    // Moved out before it runs: the action may set new events.
    Event event = events_.top();
    events_.pop();
    now_ = event.time;
    event.action();
  }
  size_t waiting = 0;
  for (auto& fiber : fibers_) waiting += fiber->finished ? 0 : 1;
  stopAll();
  if (error_) std::rethrow_exception(error_);
  if (waiting > 0)
    throw std::runtime_error("simulation stuck: " + std::to_string(waiting) +
                             " fiber(s) (ranks' plans, GPU ranks' streams) "
                             "wait and no event is left");
}

void Scheduler::suspend() {
  switchOut(false);
  if (stopping_) throw Stop{};
}

void Scheduler::resume(int fiber) {
  at(now_, [this, fiber] { switchTo(fiber); });
}

void Scheduler::sleepFor(double seconds) {
  const int self = current_;
  at(now_ + seconds, [this, self] { switchTo(self); });
  suspend();
}

// A fiber enters through its ucontext once; every later switch, either
// way, is a _setjmp/_longjmp pair, which unlike swapcontext leaves the
// signal mask alone: no system call per switch, most of a large run's time
// otherwise. The scheduler's frame that the first swapcontext leaves is
// abandoned when the fiber jumps back to schedulerResumeAt_.
void Scheduler::switchTo(int id) {
  Fiber& fiber = *fibers_[id];
  if (fiber.finished) return;
  current_ = id;
  startSwitch(&schedulerFakeStack_, fiber.stack.get(), kStackBytes);
  if (_setjmp(schedulerResumeAt_) == 0) {
    if (fiber.started) _longjmp(fiber.resumeAt, 1);
    fiber.started = true;
    swapcontext(&schedulerContext_, &fiber.context);
  }
  finishSwitch(schedulerFakeStack_, nullptr, nullptr);
  current_ = -1;
}

void Scheduler::switchOut(bool finishing) {
  Fiber& fiber = *fibers_[current_];
  // A finished fiber's fake stack goes (null: nothing to keep).
  startSwitch(finishing ? nullptr : &fiber.fakeStack, schedulerStackBottom_,
              schedulerStackSize_);
  if (_setjmp(fiber.resumeAt) == 0) _longjmp(schedulerResumeAt_, 1);
  finishSwitch(fiber.fakeStack, nullptr, nullptr);
}

// Each unfinished fiber runs once more and unwinds.
void Scheduler::stopAll() {
  stopping_ = true;
  for (size_t id = 0; id < fibers_.size(); ++id) switchTo(static_cast<int>(id));
}

}  // namespace hetccl::sim
