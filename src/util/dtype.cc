#include "util/dtype.h"

#include <cstdint>

#include "util/error.h"

namespace hetccl {
namespace {

struct DtypeInfo {
  ncclDataType_t dtype;
  size_t size;
  const char* name;  // canonical name
};

constexpr DtypeInfo kDtypes[] = {
    {ncclInt8, 1, "int8"},          {ncclUint8, 1, "uint8"},
    {ncclInt32, 4, "int32"},        {ncclUint32, 4, "uint32"},
    {ncclInt64, 8, "int64"},        {ncclUint64, 8, "uint64"},
    {ncclFloat16, 2, "float16"},    {ncclFloat32, 4, "float32"},
    {ncclFloat64, 8, "float64"},    {ncclBfloat16, 2, "bfloat16"},
    {ncclFloat8e4m3, 1, "fp8e4m3"}, {ncclFloat8e5m2, 1, "fp8e5m2"},
};

constexpr const char* kRedOpNames[ncclNumOps] = {"sum", "prod", "max", "min",
                                                 "avg"};

constexpr bool tableIndexedByEnum() {
  for (int index = 0; index < ncclNumTypes; ++index)
    if (kDtypes[index].dtype != index) return false;
  return sizeof(kDtypes) / sizeof(kDtypes[0]) == ncclNumTypes;
}
static_assert(tableIndexedByEnum(), "kDtypes must be indexed by enum value");

const DtypeInfo* findDtype(ncclDataType_t dtype) {
  // The enum values are the table indices; checking the range first keeps
  // out-of-range values (which callers can pass through the C API) safe.
  const auto index = static_cast<int64_t>(dtype);
  if (index < 0 || index >= ncclNumTypes) return nullptr;
  return &kDtypes[index];
}

}  // namespace

bool dtypeValid(ncclDataType_t dtype) { return findDtype(dtype) != nullptr; }

size_t dtypeSize(ncclDataType_t dtype) {
  const DtypeInfo* info = findDtype(dtype);
  return info ? info->size : 0;
}

const char* dtypeName(ncclDataType_t dtype) {
  const DtypeInfo* info = findDtype(dtype);
  return info ? info->name : "invalid";
}

const char* redOpName(ncclRedOp_t op) {
  const auto index = static_cast<int64_t>(op);
  if (index < 0 || index >= ncclNumOps) return "invalid";
  return kRedOpNames[index];
}

ncclDataType_t checkedDtype(const ncclDataType_t& dtype) {
  int raw = enumValue(dtype);
  if (raw < 0 || raw >= ncclNumTypes)
    fail(ncclInvalidArgument, "invalid datatype %d", raw);
  return static_cast<ncclDataType_t>(raw);
}

}  // namespace hetccl
