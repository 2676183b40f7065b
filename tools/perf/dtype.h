// The element types the benchmark sweeps over, with what the correctness
// check needs to know about each: how to store a number in it, how to read
// one back, and how large integers may grow before they stop being exact.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "nccl.h"

namespace hetccl {
namespace perf {

struct DataType {
  ncclDataType_t nccl;
  const char* name;  // canonical name, used in the table and the JSON
  size_t size;       // bytes per element
  bool isFloat;
  bool isSigned;
  // Every integer x with |x| <= exactLimit is stored exactly (and in range).
  int64_t exactLimit;
  // 2^maxPow2 is stored exactly (and in range).
  int maxPow2;
  // Relative rounding error of one operation (2^-(mantissa bits + 1)); 0 for
  // integers.
  double unitRoundoff;
  // The smallest positive value (subnormal); 0 for integers.
  double smallestPositive;
};

// Every type NCCL 2.28 defines, in enum order.
const std::vector<DataType>& allDataTypes();

// Accepts the canonical names and the usual aliases (float, half, bf16,
// double, e4m3, ...); nullptr if unknown.
const DataType* findDataType(const std::string& name);

// Stores `value` (rounded to nearest-even; NaN stores the type's "poison":
// NaN for floats, the largest value for integers) into one element at dst.
void encodeValue(const DataType& type, double value, void* dst);

// Reads one element at src as a double (exact for every integer type value
// up to 2^53 and for every float format).
double decodeValue(const DataType& type, const void* src);

}  // namespace perf
}  // namespace hetccl
