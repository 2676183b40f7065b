#include "util/cpu_cores.h"

#include <sched.h>

namespace hetccl {

int availableCores() {
  cpu_set_t cores;
  if (sched_getaffinity(0, sizeof cores, &cores) != 0) return 1;
  const int count = CPU_COUNT(&cores);
  return count > 0 ? count : 1;
}

}  // namespace hetccl
