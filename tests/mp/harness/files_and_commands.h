// What the multi-process tests read and run beside the ranks: a log or
// status file whole, a tool's output, a pause.
#pragma once

#include <string>

namespace hetccl::mp {

// The whole file; "" when it cannot be read.
std::string readFile(const std::string& path);
// What `command` (run by the shell) printed on its standard output.
std::string outputOf(const std::string& command);
void sleepSeconds(double seconds);

}  // namespace hetccl::mp
