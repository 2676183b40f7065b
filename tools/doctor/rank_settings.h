// What the doctor checks in a rank's own settings, which the library reads
// only where it needs them: a vendor library path forced on a node where
// no file is there fails that node's GPU ranks when they first load it,
// and passes unnoticed on CPU ranks until the job moves to GPUs.
#pragma once

#include <string>

namespace hetccl {
namespace doctor {

// The problems of this process's settings, "; "-separated (empty: none).
std::string settingProblemsHere();

}  // namespace doctor
}  // namespace hetccl
