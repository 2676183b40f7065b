// Calls a vendor library makes to its own API. NCCL (and RCCL) call some of
// their exported functions through the dynamic linker; when the program has
// the library in its global scope too (PyTorch loads it so), those calls
// can land in HetCCL's functions of the same name, which must hand them
// back: the library's handles and memory are not HetCCL's.
#pragma once

#include "domain/nccl_api/nccl_api_library.h"

namespace hetccl {

// The table of the loaded vendor library that `caller` (a return address)
// lies in, else null. Never loads a library.
const NcclApi* ncclCalling(const void* caller);

}  // namespace hetccl
