// A GPU runtime (CUDA or HIP) that the program itself loaded. HetCCL's core
// links neither, so it asks whichever one is already in the process and
// never loads one that is not there.
#pragma once

#include <optional>
#include <vector>

namespace hetccl {

// Sonames of one runtime, newest first (e.g. libcudart.so.13 before
// libcudart.so.12).
using RuntimeSonames = std::vector<const char*>;

// The runtime function `name`: visible globally, or inside one of
// `sonames` that was loaded privately (Python extensions load theirs with
// RTLD_LOCAL). Nothing when no such library is loaded or it lacks `name`.
void* loadedRuntimeFunction(const RuntimeSonames& sonames, const char* name);

// The device current on the calling thread, asked of the runtime's
// `<prefix>GetDeviceCount` and `<prefix>GetDevice` (prefix "cuda" or
// "hip"); nothing when the runtime is not loaded, has no device or fails,
// or HETCCL_FORCE_CPU=1. `label` ("CUDA", "HIP") names it in the log.
std::optional<int> loadedRuntimeCurrentDevice(const RuntimeSonames& sonames,
                                              const char* prefix,
                                              const char* label);

// How many devices the runtime sees (`<prefix>GetDeviceCount`); nothing
// when it is not loaded or fails.
std::optional<int> loadedRuntimeDeviceCount(const RuntimeSonames& sonames,
                                            const char* prefix);

}  // namespace hetccl
