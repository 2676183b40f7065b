// Starts the ranks of a single-host benchmark as forked child processes, for
// libraries that need no launcher of their own (Gloo): one command gives a
// whole N-rank run, and no rank outlives the run.
#ifndef HETCCL_BENCH_PEERS_FORK_LAUNCHER_H_
#define HETCCL_BENCH_PEERS_FORK_LAUNCHER_H_

#include <chrono>
#include <functional>
#include <string>

namespace hetccl::bench {

// A fresh directory under $TMPDIR (or /tmp), removed with its contents when
// the object goes.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Forks `nranks` children; child r runs rankMain(r) and exits with its
// return value (1 if it throws). Children are killed if the parent dies or
// if they are not all done within `timeout`. Returns 0 when every child
// exited 0, else the first non-zero status (124 on timeout).
int runForkedRanks(int nranks, std::chrono::seconds timeout,
                   const std::function<int(int rank)>& rankMain);

}  // namespace hetccl::bench

#endif  // HETCCL_BENCH_PEERS_FORK_LAUNCHER_H_
