// Facts about NCCL's data types and reduction operators: sizes, names, and
// parsing of the names that tools and environment variables use.
#pragma once

#include <cstring>

#include <cstddef>

#include "nccl.h"

namespace hetccl {

// True for the builtin NCCL data types (ncclInt8 .. ncclFloat8e5m2).
bool dtypeValid(ncclDataType_t dtype);

// Bytes per element; 0 for an invalid type.
size_t dtypeSize(ncclDataType_t dtype);

// Canonical name ("int8", "float32", "bfloat16", "fp8e4m3", ...);
// "invalid" for an invalid type.
const char* dtypeName(ncclDataType_t dtype);

// "sum", "prod", "max", "min", "avg"; "invalid" for anything else (including
// user-defined PreMulSum operators, which have no fixed name).
const char* redOpName(ncclRedOp_t op);

// The integer a caller passed for an enum argument. C callers (and ctypes)
// can pass any int; reading such a value through the enum type is undefined
// in C++, so arguments are checked through their bytes before use.
template <typename Enum>
int enumValue(const Enum& value) {
  static_assert(sizeof(Enum) == sizeof(int), "enums of the NCCL API are ints");
  int raw;
  std::memcpy(&raw, &value, sizeof(raw));
  return raw;
}

// Throws ncclInvalidArgument unless `dtype` is one of NCCL's data types.
ncclDataType_t checkedDtype(const ncclDataType_t& dtype);

}  // namespace hetccl
