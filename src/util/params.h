// HetCCL's environment parameters: one declaration each (params.def), read
// through one set of parsers. An empty value means unset; HETCCL_* wins over
// its NCCL_* alias. A malformed or out-of-range value is an Error
// (ncclInvalidArgument) naming the variable, its value and what is accepted.
// Per-communicator values are read into a Settings (util/settings.h);
// process-wide ones (logging, socket selection, library paths) are read
// with the readers below where they are needed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hetccl {

enum class Param {
#define HETCCL_PARAM(id, ...) id,
#include "util/params.def"
#undef HETCCL_PARAM
};

enum class ParamType { Flag, Integer, Size, Seconds, Choice, String };

// What the ranks of a communicator need of each other's values (params.def):
// nothing (Local), the same value (Same: compared at init), or rank 0's
// (Rank0: adopted by the transport at set-up).
enum class ParamScope { Local, Same, Rank0 };

struct ParamSpec {
  Param id;
  const char* name;
  const char* ncclAlias;  // nullptr: none
  ParamType type;
  ParamScope scope;
  // Parsed like a set value; for a String, what leaving it unset means.
  const char* defaultText;
  int64_t min;  // Integer, Size, Seconds
  int64_t max;
  // Choice: the accepted values, comma separated; String: their form.
  const char* accepted;
  const char* doc;
};

// Every parameter, in declaration order.
const std::vector<ParamSpec>& allParams();
const ParamSpec& paramSpec(Param param);

// A parameter's value as set: the text and the variable it came from.
struct ParamSetting {
  std::string text;
  const char* variable;
};
std::optional<ParamSetting> paramSetting(const ParamSpec& spec);

// An environment variable outside the table (CUDA_HOME, ROCM_PATH), with
// the same rule: empty means unset.
std::optional<std::string> environmentValue(const char* name);

// A size as one would set it: "4K", "1G", "300" (the largest suffix that
// divides it exactly).
std::string sizeText(int64_t value);

// "4K to 1G", "0 or 1", "NONE, VERSION, WARN, INFO or TRACE".
std::string describeAccepted(const ParamSpec& spec);

// The typed value: the setting if any, else the default. Throws an Error
// (ncclInvalidArgument) for a setting the parameter does not accept.
bool readFlag(Param param);
int64_t readInteger(Param param);  // Integer and Size
double readSeconds(Param param);
std::string readChoice(Param param);  // as declared in `accepted`
std::optional<std::string> readString(Param param);
// The value in force as text that two ranks can compare: a number in
// decimal (a size in bytes), a flag 0 or 1, a choice as declared, a string
// as set or, unset, its default. Throws like the readers.
std::string readCanonical(Param param);

// Checks `text` as a value of `spec` without reading the environment; the
// message names `variable` (what hetccl-info shows for each setting).
void checkParamText(const ParamSpec& spec, const std::string& text,
                    const char* variable);

// The parsers behind the readers: false for text they do not accept.
// A size is decimal digits with an optional K, M or G (powers of 1024) and
// an optional B; it must fit in int64_t.
bool parseSize(const std::string& text, int64_t* value);
bool parseInteger(const std::string& text, int64_t* value);
bool parseSeconds(const std::string& text, double* value);

}  // namespace hetccl
