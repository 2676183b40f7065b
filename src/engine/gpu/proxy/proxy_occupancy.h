// Where the staging proxy's time went, per direction, so that a link that
// moves less than it can shows what held it back: the network (a piece
// posted and not done), the engine's streams (a piece whose launch the
// stream has reached, waiting for its staging copy or a free slot), the
// launch (a piece whose launch the stream has not reached), or nothing to
// do. The proxy accounts each pass; the time between two passes belongs
// to what the first one found. Logged (INFO TUNING) when the engine goes.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace hetccl {

class ProxyOccupancy {
 public:
  using Clock = std::chrono::steady_clock;
  enum class State { kIdle, kLaunch, kStream, kNetwork };
  enum Way { kSends, kReceives };

  // What a pass found each way; the time since the previous pass goes to
  // what that one found.
  void account(Clock::time_point now, State sends, State receives);
  void addPiece(Way way, size_t bytes);
  // "sends 2.1 GB in 412 pieces: network 81% (6.4 GB/s there), stream
  // 17%, launch 2% of 0.40 s busy; receives ..."; empty if no piece moved.
  std::string summary() const;

 private:
  static constexpr size_t kStates = 4;
  struct Direction {
    std::array<double, kStates> seconds{};
    uint64_t bytes = 0;
    uint64_t pieces = 0;
    State state = State::kIdle;
  };
  static std::string describe(const char* name, const Direction& direction);

  std::array<Direction, 2> ways_;
  Clock::time_point last_{};
  bool started_ = false;
};

}  // namespace hetccl
