// Facts about NCCL's data types, and exact conversions between double and
// the narrow float formats (fp16, bf16, fp8 e4m3/e5m2) for reference values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "nccl.h"

namespace hetccl::mp {

// Every distinct type, in enum order (ncclChar etc. are aliases).
const std::vector<ncclDataType_t>& allDataTypes();

const char* dataTypeName(ncclDataType_t type);
size_t dataTypeSize(ncclDataType_t type);
bool isFloatType(ncclDataType_t type);
bool isSignedType(ncclDataType_t type);  // floats count as signed

// Largest N such that every integer in [-N, N] (or [0, N] for unsigned
// types) is exactly representable, capped at 2^50 so doubles hold sums.
double exactIntegerLimit(ncclDataType_t type);

// Relative spacing of the type's values: 2^-mantissaBits (0 for integers).
double relativeEpsilon(ncclDataType_t type);

// The element's value. Integers must fit in a double exactly (callers keep
// them below 2^53); floats decode exactly, NaN stays NaN.
double loadAsDouble(const void* element, ncclDataType_t type);

// Stores `value` rounded to nearest-even in float types; integers must be
// in range (truncated otherwise).
void storeFromDouble(double value, ncclDataType_t type, void* element);

// False for NaN and infinity bit patterns (true for every integer).
bool isFiniteElement(const void* element, ncclDataType_t type);

}  // namespace hetccl::mp
