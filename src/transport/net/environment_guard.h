// Keeps a call into foreign code (a network plugin's load and init) from
// changing HetCCL's process environment behind its back: some plugins set
// variables meant for NCCL (aws-ofi-nccl sets NCCL_PROTO), which HetCCL,
// reading NCCL_* names too, would then take for the user's.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hetccl {

// One variable the guarded code set, changed or removed.
struct EnvironmentChange {
  std::string name;
  std::optional<std::string> before;  // nullopt: it was unset
  std::optional<std::string> after;   // nullopt: the code removed it
};

class EnvironmentGuard {
 public:
  // Takes a snapshot of the environment.
  EnvironmentGuard();

  // Puts every variable back as the snapshot had it; returns what the code
  // since the snapshot had changed, by name.
  std::vector<EnvironmentChange> restore();

 private:
  std::map<std::string, std::string> before_;
};

// "NCCL_PROTO=Simple (was unset), FOO unset (was 1)": for the log.
std::string describeChanges(const std::vector<EnvironmentChange>& changes);

}  // namespace hetccl
