#include "status_view.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <sstream>

namespace hetccl::info {
namespace {

// Assigns one "key value" line to its field; false for an unknown key or a
// value that does not parse.
bool parseField(const std::string& key, const std::string& value,
                RankStatus& status) {
  std::istringstream in(value);
  if (key == "comm") return static_cast<bool>(in >> status.comm);
  if (key == "rank") return static_cast<bool>(in >> status.rank);
  if (key == "nranks") return static_cast<bool>(in >> status.nranks);
  if (key == "host") return static_cast<bool>(in >> status.host);
  if (key == "pid") return static_cast<bool>(in >> status.pid);
  if (key == "time") return static_cast<bool>(in >> status.time);
  if (key == "latest") return static_cast<bool>(in >> status.latest);
  if (key == "latest_op") {
    status.latestOp = value;
    return true;
  }
  if (key == "waiting_leg") {
    status.waitingLeg = value;
    return true;
  }
  if (key == "waiting_root") return static_cast<bool>(in >> status.waitingRoot);
  if (key == "waiting") {
    status.waiting = true;
    return static_cast<bool>(in >> status.waitingCall >> status.waitingPeer >>
                             status.waitingSeconds);
  }
  return false;
}

bool isStale(const RankStatus& status, double now) {
  return now - status.time > kStaleSeconds;
}

__attribute__((format(printf, 1, 2))) std::string format(const char* pattern,
                                                         ...) {
  char buffer[512];
  va_list args;
  va_start(args, pattern);
  std::vsnprintf(buffer, sizeof(buffer), pattern, args);
  va_end(args);
  return buffer;
}

std::string rankList(const std::vector<int>& ranks) {
  std::string list;
  for (int rank : ranks)
    list += (list.empty() ? "" : ", ") + std::to_string(rank);
  return list;
}

std::string describeRank(const RankStatus& status) {
  return format("rank %d (host %s, pid %d)", status.rank, status.host.c_str(),
                status.pid);
}

std::string waitText(const RankStatus& status) {
  if (!status.waiting) return "waits for nobody";
  // No peer named: one of several inside its domain, or across.
  const std::string peer = status.waitingPeer >= 0
                               ? "rank " + std::to_string(status.waitingPeer)
                           : status.waitingLeg.rfind("inside domain", 0) == 0
                               ? "a rank of its domain"
                               : "a rank of another domain";
  // Call number 0: a send or receive, which has none.
  const std::string in =
      status.waitingCall == 0
          ? "a send or receive"
          : format("call #%llu",
                   static_cast<unsigned long long>(status.waitingCall));
  std::string text = format("waits for %s in %s for %.1f s", peer.c_str(),
                            in.c_str(), status.waitingSeconds);
  if (!status.waitingLeg.empty()) text += " (" + status.waitingLeg + ")";
  if (status.waitingRoot >= 0 && status.waitingRoot != status.waitingPeer)
    text += format("; that rank waits in turn, and the chain ends at rank %d",
                   status.waitingRoot);
  return text;
}

std::string rankLine(const RankStatus& status, double now) {
  std::string line =
      format("  %s: latest call #%llu", describeRank(status).c_str(),
             static_cast<unsigned long long>(status.latest));
  if (!status.latestOp.empty()) line += " " + status.latestOp;
  line += "; " + waitText(status);
  if (isStale(status, now))
    line += format("; STALE: not refreshed for %.0f s", now - status.time);
  return line + "\n";
}

std::vector<int> waitersOf(const std::vector<RankStatus>& comm, int rank) {
  std::vector<int> waiters;
  for (const RankStatus& status : comm)
    if (status.waiting && status.waitingPeer == rank)
      waiters.push_back(status.rank);
  return waiters;
}

// The ranks whose peer said the chain of waits ends at `rank`, beyond that
// peer (a file that stopped moving says old news, so it counts not).
std::vector<int> chainWaitersOf(const std::vector<RankStatus>& comm, int rank,
                                double now) {
  std::vector<int> waiters;
  for (const RankStatus& status : comm)
    if (status.waiting && status.waitingRoot == rank &&
        status.waitingPeer != rank && !isStale(status, now))
      waiters.push_back(status.rank);
  return waiters;
}

// Whether `a` is the likelier root: a stale rank first (the process
// stopped), then the one more chains of waits end at, then the one more
// ranks wait for, then the one furthest behind.
bool likelierRoot(const RankStatus& a, const RankStatus& b,
                  const std::vector<RankStatus>& comm, double now) {
  if (isStale(a, now) != isStale(b, now)) return isStale(a, now);
  const size_t chainsA = chainWaitersOf(comm, a.rank, now).size();
  const size_t chainsB = chainWaitersOf(comm, b.rank, now).size();
  if (chainsA != chainsB) return chainsA > chainsB;
  const size_t waitersA = waitersOf(comm, a.rank).size();
  const size_t waitersB = waitersOf(comm, b.rank).size();
  if (waitersA != waitersB) return waitersA > waitersB;
  return a.latest < b.latest;
}

// A rank that others wait for and that waits for nobody itself (or no
// longer refreshes its file, so its own wait is old news), or one that
// chains of waits end at, as the ranks waited for said.
const RankStatus* waitedForRoot(const std::vector<RankStatus>& comm,
                                double now) {
  const RankStatus* root = nullptr;
  for (const RankStatus& status : comm) {
    const bool chainsEnd = !chainWaitersOf(comm, status.rank, now).empty();
    if (waitersOf(comm, status.rank).empty() && !chainsEnd) continue;
    if (status.waiting && !isStale(status, now) && !chainsEnd) continue;
    if (!root || likelierRoot(status, *root, comm, now)) root = &status;
  }
  return root;
}

std::string rootLine(const std::vector<RankStatus>& comm, double now) {
  const bool anyWaits = std::any_of(
      comm.begin(), comm.end(), [](const RankStatus& s) { return s.waiting; });
  const bool anyStale =
      std::any_of(comm.begin(), comm.end(),
                  [now](const RankStatus& s) { return isStale(s, now); });
  if (!anyWaits && !anyStale) return "  no rank waits: no stall seen\n";
  const RankStatus* root = waitedForRoot(comm, now);
  std::string why;
  if (root) {
    const std::vector<int> waiters = waitersOf(comm, root->rank);
    const std::vector<int> chains = chainWaitersOf(comm, root->rank, now);
    if (!waiters.empty()) why = "rank(s) " + rankList(waiters) + " wait for it";
    if (!chains.empty())
      why += (why.empty() ? "" : "; ") + std::string("rank(s) ") +
             rankList(chains) +
             " wait for it through the rank(s) they wait for";
    why += isStale(*root, now) ? "; its file is stale (the process stopped, "
                                 "hung hard or died)"
           : root->waiting     ? ""
                               : "; it waits for nobody";
  } else {
    root = &*std::min_element(comm.begin(), comm.end(),
                              [](const RankStatus& a, const RankStatus& b) {
                                return a.latest < b.latest;
                              });
    why = "it made the fewest calls";
  }
  return "  most likely at the root of the stall: " + describeRank(*root) +
         ": " + why + "\n";
}

std::string behindLine(const std::vector<RankStatus>& comm) {
  const auto [least, most] = std::minmax_element(
      comm.begin(), comm.end(), [](const RankStatus& a, const RankStatus& b) {
        return a.latest < b.latest;
      });
  if (least->latest == most->latest)
    return format("  behind: none (every rank at call #%llu)\n",
                  static_cast<unsigned long long>(least->latest));
  std::vector<int> behind;
  for (const RankStatus& status : comm)
    if (status.latest == least->latest) behind.push_back(status.rank);
  return format("  behind: rank(s) %s (at call #%llu, others up to #%llu)\n",
                rankList(behind).c_str(),
                static_cast<unsigned long long>(least->latest),
                static_cast<unsigned long long>(most->latest));
}

std::string missingLine(const std::vector<RankStatus>& comm) {
  std::vector<int> missing;
  for (int rank = 0; rank < comm.front().nranks; ++rank)
    if (std::none_of(comm.begin(), comm.end(),
                     [rank](const RankStatus& s) { return s.rank == rank; }))
      missing.push_back(rank);
  if (missing.empty()) return "";
  return "  no file from rank(s) " + rankList(missing) + "\n";
}

// `comm`: one communicator's ranks, in rank order.
std::string summarizeComm(const std::vector<RankStatus>& comm, double now) {
  std::string text =
      format("communicator %s: %d ranks, %zu status files\n",
             comm.front().comm.c_str(), comm.front().nranks, comm.size());
  for (const RankStatus& status : comm) text += rankLine(status, now);
  text += missingLine(comm);
  text += behindLine(comm);
  return text + rootLine(comm, now);
}

}  // namespace

std::optional<RankStatus> parseStatus(const std::string& text) {
  RankStatus status;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const size_t space = line.find(' ');
    if (space == std::string::npos ||
        !parseField(line.substr(0, space), line.substr(space + 1), status))
      return std::nullopt;
  }
  if (status.comm.empty() || status.rank < 0 || status.rank >= status.nranks)
    return std::nullopt;
  return status;
}

std::string summarizeStatus(std::vector<RankStatus> ranks, double now) {
  if (ranks.empty()) return "no status files\n";
  std::map<std::string, std::vector<RankStatus>> byComm;
  for (RankStatus& status : ranks)
    byComm[status.comm].push_back(std::move(status));
  std::string text;
  for (auto& [name, comm] : byComm) {
    std::sort(comm.begin(), comm.end(),
              [](const RankStatus& a, const RankStatus& b) {
                return a.rank < b.rank;
              });
    text += (text.empty() ? "" : "\n") + summarizeComm(comm, now);
  }
  return text;
}

}  // namespace hetccl::info
