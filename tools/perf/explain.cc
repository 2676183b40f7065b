#include "perf/explain.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace hetccl {
namespace perf {
namespace {

// What starts the text of an INFO line: "host:pid:tid HETCCL INFO ".
constexpr const char* kInfo = " HETCCL INFO ";

}  // namespace

Explain::Explain() : dir_("hetccl-perf-explain-") {
  setenv("HETCCL_DEBUG", "INFO", 1);
  setenv("HETCCL_DEBUG_SUBSYS", "TUNING", 1);
  setenv("HETCCL_DEBUG_FILE", (dir_.path() + "/rank.%p.log").c_str(), 1);
}

Explain::~Explain() {
  for (const std::string& line : lines())
    if (line.find(kInfo) == std::string::npos)
      std::fprintf(stderr, "%s\n", line.c_str());
}

std::vector<std::string> Explain::lines() const {
  std::ifstream log(dir_.path() + "/rank." + std::to_string(getpid()) + ".log");
  std::vector<std::string> all;
  for (std::string line; std::getline(log, line);) all.push_back(line);
  return all;
}

std::vector<std::string> Explain::decisions() const {
  std::vector<std::string> found;
  for (const std::string& line : lines()) {
    const size_t info = line.find(kInfo);
    if (info != std::string::npos)
      found.push_back(line.substr(info + std::string(kInfo).size()));
  }
  return found;
}

}  // namespace perf
}  // namespace hetccl
