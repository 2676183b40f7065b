#include "runtime/memory_kind.h"

#include <utility>

namespace hetccl {

std::string describeMemoryKinds(unsigned kinds) {
  std::string names;
  for (auto [kind, name] : {std::pair{kHostMemory, "host"},
                            {kCudaMemory, "cuda"},
                            {kHipMemory, "rocm"}})
    if (kinds & kind) names += (names.empty() ? "" : ", ") + std::string(name);
  return names.empty() ? "none" : names;
}

}  // namespace hetccl
