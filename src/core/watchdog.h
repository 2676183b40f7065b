// Watches the processes of a communicator's peers on this host and reports
// each one that exits, so that no rank waits forever for a dead peer.
#pragma once

#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace hetccl {

class Watchdog {
 public:
  struct Peer {
    int rank;
    int pid;
  };
  using ExitHandler = std::function<void(const Peer&)>;
  // `onExit` runs on the watchdog's thread, once for each peer that exits.
  Watchdog(std::vector<Peer> peers, ExitHandler onExit);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  void watch();

  std::vector<Peer> peers_;
  std::vector<int> pidfds_;  // owned; parallel to peers_
  int stopFd_ = -1;          // owned eventfd that ends the thread
  ExitHandler onExit_;
  std::thread thread_;
};

}  // namespace hetccl
