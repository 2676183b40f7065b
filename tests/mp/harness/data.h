// Deterministic test data. Every element depends only on (seed, rank,
// index), so any rank can compute every other rank's input, and with it the
// exact expected result, without talking to anyone.
//
// Reduction inputs are chosen so that results are exact in every type:
// small integers whose sums and products stay inside the range the type
// holds exactly (e.g. |sum| <= 8 for fp8 e5m2); max/min use arbitrary finite
// values. Only the float average is compared with a tolerance, since
// libraries may scale before or after summing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "nccl.h"

namespace hetccl::mp {

// Reduction operations as tests see them: the built-in ops plus PreMulSum
// with the scalar read at creation (host) or at execution (device).
enum class TestOp {
  kSum,
  kProd,
  kMax,
  kMin,
  kAvg,
  kPreMulSumHost,
  kPreMulSumDevice
};

const std::vector<TestOp>& allTestOps();
const char* testOpName(TestOp op);
bool isPreMulSum(TestOp op);
ncclRedOp_t builtinRedOp(TestOp op);  // not for PreMulSum
// The PreMulSum factor: 3 for integer types, 0.5 for float types.
double preMulSumScalar(ncclDataType_t type);

// 64 well-mixed bits from three inputs (splitmix64 finalizer).
uint64_t mixBits(uint64_t seed, uint64_t a, uint64_t b);

struct ReduceSpec {
  ncclDataType_t type;
  TestOp op;
  int nranks;
  uint64_t seed;
};

// Element `index` of `rank`'s send buffer.
void writeReduceInput(const ReduceSpec& spec, int rank, size_t index,
                      void* element);
// Elements [firstIndex, firstIndex + count) of `rank`'s send buffer.
void fillReduceInput(const ReduceSpec& spec, int rank, size_t firstIndex,
                     size_t count, void* buffer);
// Compares `count` result elements with the reduction over all ranks of
// input elements [firstIndex, firstIndex + count). Returns "" when all
// match, else a description of the first mismatch.
std::string checkReduceResult(const ReduceSpec& spec, size_t firstIndex,
                              size_t count, const void* result);

// Opaque bytes for data-movement collectives: byte `firstByte + i` of
// `rank`'s stream for `seed`.
void fillPatternBytes(uint64_t seed, int rank, size_t firstByte, size_t bytes,
                      void* buffer);
// "" when `got` holds exactly those bytes, else where it first differs.
std::string checkPatternBytes(uint64_t seed, int rank, size_t firstByte,
                              size_t bytes, const void* got);

}  // namespace hetccl::mp
