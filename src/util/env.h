// Typed environment parameters. Each HetCCL variable may name the NCCL
// variable that means the same thing; HETCCL_* wins when both are set.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace hetccl {

// The value of `name`, else of `ncclName` (if given), else nothing.
std::optional<std::string> envString(const char* name,
                                     const char* ncclName = nullptr);

// Integer parameter; accepts K/M/G suffixes (powers of 1024). A value that
// does not parse is reported with a warning and the default is used.
int64_t envInt(const char* name, int64_t defaultValue,
               const char* ncclName = nullptr);

// Seconds as a double (e.g. "2.5").
double envSeconds(const char* name, double defaultValue,
                  const char* ncclName = nullptr);

// Parses "123", "4K", "16M", "1G"; false if it is not such a number.
bool parseSize(const std::string& text, int64_t* value);

}  // namespace hetccl
