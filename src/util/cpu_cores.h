// The cores this process may run on (its affinity mask), which the
// thread counts chosen by default follow.
#pragma once

namespace hetccl {

// At least 1.
int availableCores();

}  // namespace hetccl
