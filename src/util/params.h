// HetCCL's environment parameters. Each component declares its own in an
// X-macro file beside its code (transport/tcp/tcp_params.def, ...), one row
// per parameter:
//   HETCCL_PARAM(kId, NAME, NCCL_ALIAS, Type, Scope, DEFAULT, MIN, MAX,
//                ACCEPTED, DOC)
// Type: Flag (0 or 1), Integer, Size (K/M/G suffixes, powers of 1024),
// Seconds (finite, >= 0), Choice (one of ACCEPTED, comma separated, any
// case), String (ACCEPTED describes the form; HetCCL's user checks it).
// Scope: what the ranks of a communicator need of each other's values
// (ParamScope). DEFAULT is parsed like a set value, except for String
// parameters, whose DEFAULT says what leaving them unset means. MIN/MAX
// bound numbers (HETCCL_NO_BOUND elsewhere).
//
// The component's header expands its file with util/declare_params.inc: a
// ParamSpec constant `kId` per row, read with the readers below where the
// component needs it (by its settings' fromEnvironment(), or where a
// process-wide value is used), and a function that returns the component's
// list. core/all_params.h joins the lists, one line per component, for
// hetccl-info, docs/configuration.md's table and the comparison of Same
// parameters at init (util/settings_agreement.h).
//
// An empty value means unset; HETCCL_* wins over its NCCL_* alias. A
// malformed or out-of-range value is an Error (ncclInvalidArgument) naming
// the variable, its value and what is accepted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#define HETCCL_NO_ALIAS nullptr
#define HETCCL_NO_BOUND 0

namespace hetccl {

enum class ParamType { Flag, Integer, Size, Seconds, Choice, String };

// What the ranks of a communicator need of each other's values: nothing
// (Local: each rank keeps its own), the same value (Same: the value shapes
// what ranks share, such as segment layouts, how messages are cut, which
// plan or path runs; init compares them and fails on every rank naming the
// variable and both values), or rank 0's (Rank0: the transport adopts it at
// set-up).
enum class ParamScope { Local, Same, Rank0 };

struct ParamSpec {
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

// Parameters in declaration order; a component's list, or all of them.
using ParamList = std::vector<const ParamSpec*>;

// A parameter's value as set: the text and the variable it came from.
struct ParamSetting {
  std::string text;
  const char* variable;
};
std::optional<ParamSetting> paramSetting(const ParamSpec& spec);

// The one reader of environment variables that are other software's, not
// parameters (CUDA_HOME, ROCM_PATH, UCX_NET_DEVICES), with the same rule:
// empty means unset.
std::optional<std::string> environmentValue(const char* name);

// A size as one would set it: "4K", "1G", "300" (the largest suffix that
// divides it exactly).
std::string sizeText(int64_t value);

// "4K to 1G", "0 or 1", "NONE, VERSION, WARN, INFO or TRACE".
std::string describeAccepted(const ParamSpec& spec);

// The typed value: the setting if any, else the default. Throws an Error
// (ncclInvalidArgument) for a setting the parameter does not accept.
bool readFlag(const ParamSpec& spec);
int64_t readInteger(const ParamSpec& spec);  // Integer and Size
// A Size as a byte count: every Size parameter is bounded by at most 1 GiB,
// so the narrowing is exact.
size_t readBytes(const ParamSpec& spec);
double readSeconds(const ParamSpec& spec);
std::string readChoice(const ParamSpec& spec);  // as declared in `accepted`
std::optional<std::string> readString(const ParamSpec& spec);
// The value in force as text that two ranks can compare: a number in
// decimal (a size in bytes), a flag 0 or 1, a choice as declared, a string
// as set or, unset, its default. Throws like the readers.
std::string readCanonical(const ParamSpec& spec);

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

// util's own parameters (util_params.def): logging and socket selection,
// read where they are used (log.cc, socket.cc).
#define HETCCL_PARAMS_FILE "util/util_params.def"
#define HETCCL_PARAMS_LIST utilParams
#include "util/declare_params.inc"

}  // namespace hetccl
