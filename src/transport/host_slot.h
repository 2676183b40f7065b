// Where a rank sits among the ranks of its host: what a transport with
// several devices per host (the net transport's rails) shares them by.
#pragma once

namespace hetccl {

struct HostSlot {
  int index = 0;  // this rank's place among its host's ranks, by rank
  int ranks = 1;  // how many ranks the host has
};

}  // namespace hetccl
