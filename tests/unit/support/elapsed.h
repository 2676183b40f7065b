// Timing of waits that must end promptly.
#pragma once

#include <chrono>

namespace hetccl {

using Clock = std::chrono::steady_clock;

inline double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace hetccl
