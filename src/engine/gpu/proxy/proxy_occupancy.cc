#include "engine/gpu/proxy/proxy_occupancy.h"

#include "util/error.h"

namespace hetccl {

void ProxyOccupancy::account(Clock::time_point now, State sends,
                             State receives) {
  if (started_) {
    const double elapsed = std::chrono::duration<double>(now - last_).count();
    for (Direction& way : ways_)
      way.seconds[static_cast<size_t>(way.state)] += elapsed;
  }
  started_ = true;
  last_ = now;
  ways_[kSends].state = sends;
  ways_[kReceives].state = receives;
}

void ProxyOccupancy::addPiece(Way way, size_t bytes) {
  ways_[way].bytes += bytes;
  ++ways_[way].pieces;
}

std::string ProxyOccupancy::describe(const char* name,
                                     const Direction& direction) {
  const auto seconds = [&](State state) {
    return direction.seconds[static_cast<size_t>(state)];
  };
  const double busy = seconds(State::kLaunch) + seconds(State::kStream) +
                      seconds(State::kNetwork);
  if (direction.pieces == 0 || busy <= 0) return format("%s none", name);
  const auto share = [&](State state) { return 100 * seconds(state) / busy; };
  const double network = seconds(State::kNetwork);
  return format(
      "%s %.2f GB in %llu pieces: network %.0f%% (%.2f GB/s there), "
      "stream %.0f%%, launch %.0f%% of %.3f s busy",
      name, direction.bytes / 1e9,
      static_cast<unsigned long long>(direction.pieces), share(State::kNetwork),
      network > 0 ? direction.bytes / network / 1e9 : 0, share(State::kStream),
      share(State::kLaunch), busy);
}

std::string ProxyOccupancy::summary() const {
  if (ways_[kSends].pieces == 0 && ways_[kReceives].pieces == 0) return "";
  return describe("sends", ways_[kSends]) + "; " +
         describe("receives", ways_[kReceives]);
}

}  // namespace hetccl
