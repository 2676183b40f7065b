// Where HetCCL's run-time modules (libhetccl-cuda.so, libhetccl-hip.so,
// libhetccl-ucx.so) are found.
#pragma once

#include <string>
#include <vector>

#include "util/params.h"

namespace hetccl {

// The path `variable` names if set; else `fileName` beside the HetCCL
// library or program this code runs in (whichever name it has:
// libnccl.so.2, libhetccl.so, hetccl-info), or where an install or a build
// tree puts modules relative to it; else `fileName` alone, for the
// loader's search path.
std::string modulePath(const ParamSpec& variable, const char* fileName);

// Where modulePath looks for `fileName` when no variable names it, in
// order (hetccl-info lists them when none holds it).
std::vector<std::string> moduleCandidates(const char* fileName);

}  // namespace hetccl
