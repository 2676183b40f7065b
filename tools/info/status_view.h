// `hetccl-info --status DIR`: the status files that ranks keep under
// HETCCL_STATUS_DIR (src/core/status_file.h), summed up per communicator:
// how far each rank got, whom it waits for, which ranks are behind, and
// the rank most likely at the root of a stall. Parsing and summing up are
// pure functions of the files' texts and the time, so that they are tested
// on texts written by hand; only the tool's main reads the directory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hetccl::info {

struct RankStatus {
  std::string comm;  // the communicator's name (hex)
  int rank = -1;
  int nranks = 0;
  std::string host;
  int pid = 0;
  double time = 0;  // wall-clock seconds when written
  uint64_t latest = 0;
  std::string latestOp;  // "allReduce(1 x float32, sum)"; may be empty
  bool waiting = false;
  uint64_t waitingCall = 0;
  int waitingPeer = -1;  // -1: a rank of another domain, unknown which
  double waitingSeconds = 0;
  std::string waitingLeg;  // "on its tcp link: 2 of 4 pieces received"
  // The rank at the end of the chain of waits, as the peer waited for
  // said it (the call probe's relay); -1 when none said so.
  int waitingRoot = -1;
};

// A file older than this belongs to a process that stopped refreshing it
// (the ranks write theirs each second): stopped, hung hard, or dead.
constexpr double kStaleSeconds = 10;

// One file's text; nothing when it is not a status file.
std::optional<RankStatus> parseStatus(const std::string& text);

// The summary of every communicator in `ranks`, as of wall-clock `now`.
std::string summarizeStatus(std::vector<RankStatus> ranks, double now);

}  // namespace hetccl::info
