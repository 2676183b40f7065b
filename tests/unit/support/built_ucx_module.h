// The UCX module this build made, for unit tests: they link HetCCL's
// internal archive, so the module is not "beside the library" for them.
#pragma once

namespace hetccl {

// Points HETCCL_UCX_MODULE at the built module (unless the environment
// names one) and loads UCX. False, and the caller skips, when the build has
// no module or UCX cannot be used here; the reason is in `why`.
bool useBuiltUcxModule(const char** why);

}  // namespace hetccl
