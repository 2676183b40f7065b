#include "support/thread_ranks.h"

#include <exception>
#include <thread>

namespace hetccl {

void runRanks(int nranks, const std::function<void(int)>& body) {
  std::vector<std::exception_ptr> errors(nranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < nranks; ++r)
    threads.emplace_back([&, r] {
      try {
        body(r);
      } catch (...) {
        errors[r] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

std::vector<int> everyoneBut(int rank, int nranks) {
  std::vector<int> peers;
  for (int r = 0; r < nranks; ++r)
    if (r != rank) peers.push_back(r);
  return peers;
}

}  // namespace hetccl
