// --explain: HetCCL's decision log (INFO, subsystem TUNING: for the first
// op of each kind and size class, which plan it took and why) for the
// run. The library logs it to a file of this rank's own, which the tool
// reads back: the tool reaches HetCCL through its public API only.
#pragma once

#include <string>
#include <vector>

#include "kit/temp_dir.h"

namespace hetccl {
namespace perf {

class Explain {
 public:
  // Before the library's first call in this process: points its log at
  // this rank's file (HETCCL_DEBUG=INFO, HETCCL_DEBUG_SUBSYS=TUNING,
  // HETCCL_DEBUG_FILE; whatever they held is overridden for the run).
  Explain();
  // Echoes to stderr the lines that are not decisions (warnings), which
  // would otherwise have gone there.
  ~Explain();
  Explain(const Explain&) = delete;
  Explain& operator=(const Explain&) = delete;

  // The decisions logged so far, without the log's prefixes.
  std::vector<std::string> decisions() const;

 private:
  std::vector<std::string> lines() const;

  kit::TempDir dir_;
};

}  // namespace perf
}  // namespace hetccl
