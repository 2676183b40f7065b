#include "util/dtype.h"

#include "util/error.h"

#include <strings.h>

#include <cstdint>

namespace hetccl {
namespace {

struct DtypeInfo {
  ncclDataType_t dtype;
  size_t size;
  bool isFloat;
  const char* name;  // canonical name, first in the table for its type
};

constexpr DtypeInfo kDtypes[] = {
    {ncclInt8, 1, false, "int8"},         {ncclUint8, 1, false, "uint8"},
    {ncclInt32, 4, false, "int32"},       {ncclUint32, 4, false, "uint32"},
    {ncclInt64, 8, false, "int64"},       {ncclUint64, 8, false, "uint64"},
    {ncclFloat16, 2, true, "float16"},    {ncclFloat32, 4, true, "float32"},
    {ncclFloat64, 8, true, "float64"},    {ncclBfloat16, 2, true, "bfloat16"},
    {ncclFloat8e4m3, 1, true, "fp8e4m3"}, {ncclFloat8e5m2, 1, true, "fp8e5m2"},
};

struct DtypeAlias {
  const char* name;
  ncclDataType_t dtype;
};

// Accepted in addition to the canonical names.
constexpr DtypeAlias kDtypeAliases[] = {
    {"char", ncclChar},
    {"i8", ncclInt8},
    {"u8", ncclUint8},
    {"int", ncclInt32},
    {"i32", ncclInt32},
    {"u32", ncclUint32},
    {"uint", ncclUint32},
    {"i64", ncclInt64},
    {"u64", ncclUint64},
    {"half", ncclFloat16},
    {"fp16", ncclFloat16},
    {"f16", ncclFloat16},
    {"float", ncclFloat32},
    {"fp32", ncclFloat32},
    {"f32", ncclFloat32},
    {"double", ncclFloat64},
    {"fp64", ncclFloat64},
    {"f64", ncclFloat64},
    {"bf16", ncclBfloat16},
    {"bfloat", ncclBfloat16},
    {"e4m3", ncclFloat8e4m3},
    {"fp8_e4m3", ncclFloat8e4m3},
    {"float8e4m3", ncclFloat8e4m3},
    {"e5m2", ncclFloat8e5m2},
    {"fp8_e5m2", ncclFloat8e5m2},
    {"float8e5m2", ncclFloat8e5m2},
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

bool dtypeIsFloat(ncclDataType_t dtype) {
  const DtypeInfo* info = findDtype(dtype);
  return info && info->isFloat;
}

bool parseDtype(const char* name, ncclDataType_t* dtype) {
  if (name == nullptr) return false;
  for (const DtypeInfo& info : kDtypes) {
    if (strcasecmp(name, info.name) == 0) {
      *dtype = info.dtype;
      return true;
    }
  }
  for (const DtypeAlias& alias : kDtypeAliases) {
    if (strcasecmp(name, alias.name) == 0) {
      *dtype = alias.dtype;
      return true;
    }
  }
  return false;
}

const char* redOpName(ncclRedOp_t op) {
  const auto index = static_cast<int64_t>(op);
  if (index < 0 || index >= ncclNumOps) return "invalid";
  return kRedOpNames[index];
}

bool parseRedOp(const char* name, ncclRedOp_t* op) {
  if (name == nullptr) return false;
  for (int index = 0; index < ncclNumOps; ++index) {
    if (strcasecmp(name, kRedOpNames[index]) == 0) {
      *op = static_cast<ncclRedOp_t>(index);
      return true;
    }
  }
  return false;
}

ncclDataType_t checkedDtype(const ncclDataType_t& dtype) {
  int raw = enumValue(dtype);
  if (raw < 0 || raw >= ncclNumTypes)
    fail(ncclInvalidArgument, "invalid datatype %d", raw);
  return static_cast<ncclDataType_t>(raw);
}

}  // namespace hetccl
