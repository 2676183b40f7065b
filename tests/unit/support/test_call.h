// The call the links' own tests give their transfers: the same at both
// ends, so that only what a test means to break differs.
#pragma once

#include "op/call_signature.h"

namespace hetccl {

inline constexpr CallSignature kTestCall{};

}  // namespace hetccl
