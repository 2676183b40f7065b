// How the staging proxy's time is split: the time between two passes goes
// to what the first pass found, each direction on its own, and the
// summary says the shares of the busy time and the rate while on the
// network.
#include <gtest/gtest.h>

#include <string>

#include "engine/gpu/proxy/proxy_occupancy.h"

namespace hetccl {
namespace {

using State = ProxyOccupancy::State;
using std::chrono::milliseconds;

TEST(ProxyOccupancy, SaysNothingUntilAPieceMoved) {
  ProxyOccupancy occupancy;
  const auto start = ProxyOccupancy::Clock::now();
  occupancy.account(start, State::kNetwork, State::kNetwork);
  occupancy.account(start + milliseconds(10), State::kIdle, State::kIdle);
  EXPECT_EQ(occupancy.summary(), "");
}

TEST(ProxyOccupancy, SplitsEachDirectionsBusyTimeByWhatThePassFound) {
  ProxyOccupancy occupancy;
  const auto start = ProxyOccupancy::Clock::now();
  occupancy.account(start, State::kNetwork, State::kNetwork);
  occupancy.account(start + milliseconds(500), State::kStream, State::kNetwork);
  occupancy.account(start + milliseconds(750), State::kLaunch, State::kNetwork);
  occupancy.account(start + milliseconds(1000), State::kIdle, State::kIdle);
  // Idle time is left out of the shares.
  occupancy.account(start + milliseconds(5000), State::kIdle, State::kIdle);
  occupancy.addPiece(ProxyOccupancy::kSends, 500'000'000);
  occupancy.addPiece(ProxyOccupancy::kSends, 500'000'000);
  occupancy.addPiece(ProxyOccupancy::kReceives, 2'000'000'000);
  EXPECT_EQ(occupancy.summary(),
            "sends 1.00 GB in 2 pieces: network 50% (2.00 GB/s there), "
            "stream 25%, launch 25% of 1.000 s busy; receives 2.00 GB in 1 "
            "pieces: network 100% (2.00 GB/s there), stream 0%, launch 0% "
            "of 1.000 s busy");
}

TEST(ProxyOccupancy, ADirectionWithNoPieceSaysNone) {
  ProxyOccupancy occupancy;
  const auto start = ProxyOccupancy::Clock::now();
  occupancy.account(start, State::kNetwork, State::kIdle);
  occupancy.account(start + milliseconds(100), State::kIdle, State::kIdle);
  occupancy.addPiece(ProxyOccupancy::kSends, 1'000'000);
  const std::string summary = occupancy.summary();
  EXPECT_NE(summary.find("receives none"), std::string::npos) << summary;
}

}  // namespace
}  // namespace hetccl
