#include "doctor/rank_settings.h"

#include <unistd.h>

#include <cstdlib>

namespace hetccl {
namespace doctor {

std::string settingProblemsHere() {
  std::string problems;
  for (const char* variable : {"HETCCL_NCCL_LIBRARY", "HETCCL_RCCL_LIBRARY"}) {
    const char* path = std::getenv(variable);
    // A bare file name is the dynamic loader's to find.
    if (path == nullptr || std::string(path).find('/') == std::string::npos ||
        access(path, R_OK) == 0)
      continue;
    problems += std::string(problems.empty() ? "" : "; ") + variable + "=" +
                path +
                " is not a file this node can read: its GPU ranks cannot "
                "load the vendor library there; install it at that path or "
                "point the variable at its place on this node";
  }
  return problems;
}

}  // namespace doctor
}  // namespace hetccl
