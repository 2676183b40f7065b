// What marking a wait costs (op/waiting_call.h): every wait of an
// operation for a peer (a transfer on a link, a host domain's flag) marks
// itself for the stall reports and status files, so an operation of a few
// microseconds pays a few marks. Times a WaitScope with and without a
// piece source, on one thread while another thread looks at the wait the
// way the call probe does (every 20 ms), against a steady-clock read, in
// rounds; prints the median over the rounds.
//
// Usage: wait-mark-cost [rounds, 11] [marks per round, 2000000]
// Not a test: run it on a quiet machine.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "op/waiting_call.h"

namespace {

using Clock = std::chrono::steady_clock;

class TwoPieces : public hetccl::PieceSource {
 public:
  hetccl::PieceCount pieces() const override { return {1, 2}; }
};

template <typename Body>
double nanosecondsPer(int count, Body body) {
  const auto start = Clock::now();
  for (int i = 0; i < count; ++i) body(i);
  return std::chrono::duration<double, std::nano>(Clock::now() - start)
             .count() /
         count;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 11;
  const int marks = argc > 2 ? std::atoi(argv[2]) : 2000000;
  hetccl::WaitingCall waiting;
  const TwoPieces source;
  std::atomic<bool> done{false};
  std::thread looker([&] {
    while (!done.load()) {
      (void)waiting.stalledFor(30);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  std::vector<double> withSource, without, clockRead;
  for (int round = 0; round < rounds; ++round) {
    withSource.push_back(nanosecondsPer(marks, [&](int i) {
      hetccl::WaitScope marked(&waiting, i, 1, {}, &source);
    }));
    without.push_back(nanosecondsPer(
        marks, [&](int i) { hetccl::WaitScope marked(&waiting, i, 1); }));
    clockRead.push_back(nanosecondsPer(marks, [](int) {
      volatile auto now = Clock::now().time_since_epoch().count();
      (void)now;
    }));
  }
  done = true;
  looker.join();
  std::printf("per mark (enter and leave), median of %d rounds of %d:\n",
              rounds, marks);
  std::printf("  with a piece source: %.1f ns\n", median(withSource));
  std::printf("  without:             %.1f ns\n", median(without));
  std::printf("  a steady-clock read: %.1f ns (for scale)\n",
              median(clockRead));
  return 0;
}
