#include "util/cpu_cores.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>

namespace hetccl {

int availableCores() {
  cpu_set_t cores;
  if (sched_getaffinity(0, sizeof cores, &cores) != 0) return 1;
  const int count = CPU_COUNT(&cores);
  return count > 0 ? count : 1;
}

int coresOfOneRank(int available, int online, size_t hostRanks) {
  const auto ranks = static_cast<long>(std::max<size_t>(1, hostRanks));
  if (static_cast<long>(available) * ranks <= online) return available;
  return std::max(1, static_cast<int>(available / ranks));
}

int coresOfOneRank(size_t hostRanks) {
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return coresOfOneRank(availableCores(),
                        static_cast<int>(std::max(1L, online)), hostRanks);
}

}  // namespace hetccl
