// NCCL's element types, with what a benchmark or a test needs to make and
// check data in them: name, size, kind, how far integers stay exact, the
// rounding error of one operation, and exact conversions from and to double
// (also for fp16, bf16 and the two OCP fp8 formats, which C++ lacks).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "nccl.h"

namespace hetccl::kit {

struct DataType {
  ncclDataType_t nccl;
  const char* name;  // canonical name: "float32", "bfloat16", "fp8e4m3", ...
  size_t size;       // bytes per element
  bool isFloat;
  bool isSigned;  // floats count as signed
  // Every integer x with |x| <= exactLimit is stored exactly (and in range);
  // capped at 2^52 so that such values stay exact as doubles.
  int64_t exactLimit;
  // 2^maxPow2 is stored exactly (and in range).
  int maxPow2;
  // Relative rounding error of one operation (2^-(mantissa bits + 1)); 0 for
  // integers.
  double unitRoundoff;
  // The smallest positive value (subnormal); 0 for integers.
  double smallestPositive;
};

// Every type NCCL 2.28 defines, in enum order (ncclChar and the like are
// aliases of these).
const std::vector<DataType>& allDataTypes();

// The canonical names and the usual aliases (float, half, bf16, double,
// e4m3, ...); nullptr if unknown.
const DataType* findDataType(std::string_view name);

// The type behind an enum value; one that is no NCCL type throws
// std::invalid_argument (callers hold valid types only).
const DataType& dataTypeOf(ncclDataType_t nccl);

// Stores `value` into one element at dst, rounded to nearest-even. NaN
// stores the type's "poison": NaN for floats, the largest value for
// integers. Out-of-range floats become Inf (NaN for e4m3, which has no Inf);
// out-of-range integers wrap.
void encodeValue(const DataType& type, double value, void* dst);

// Reads one element at src as a double (exact for every integer up to 2^53
// and for every float format).
double decodeValue(const DataType& type, const void* src);

}  // namespace hetccl::kit
