// Status files (HETCCL_STATUS_DIR): a job that hangs says, in one place,
// how far each rank got and whom it waits for, without a debugger and
// without logs. Each rank of a communicator keeps DIR/<comm>.rank<R>, a
// few "key value" lines: its rank, nranks, host, pid, the latest
// collective call it made, what it waits for now (the call, the peer,
// seconds, and the leg: "on its tcp link: 2 of 4 pieces received", or
// "inside domain 0's host collectives, ..."; when the peer said it waits
// for another rank itself, the rank at the end of that chain of waits:
// "waiting_root 1") and the wall-clock time of writing. The call probe's
// thread (core/call_probe.h; in a communicator of one domain, the stall
// watch's: core/stall_watch.h) refreshes it at most once a second, so no
// operation ever waits on the file system; a file whose time stops moving
// belongs to a stopped or dead process. `hetccl-info --status DIR` reads
// them all (tools/info/status_view.h). The file is written under a
// temporary name and renamed, so readers never see half of one, and it is
// removed when the communicator goes.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "core/wait_description.h"
#include "op/call_log.h"
#include "op/waiting_call.h"

namespace hetccl {

class StatusFile {
 public:
  struct Identity {
    std::string comm;  // the communicator's name in file names (hex)
    int rank;
    int nranks;
    std::string host;
    int pid;
  };
  // How often the file is rewritten at most.
  static constexpr double kRefreshSeconds = 1.0;

  // Writes nothing yet: the first refresh() does. `names`: of the legs.
  StatusFile(const std::string& dir, Identity identity,
             std::shared_ptr<const CallLog> calls,
             std::shared_ptr<const WaitDescription> names);
  ~StatusFile();  // removes the file
  StatusFile(const StatusFile&) = delete;
  StatusFile& operator=(const StatusFile&) = delete;

  // Rewrites the file when kRefreshSeconds have passed since the last time.
  // `relayed` (may be null): what the peers said they wait for themselves.
  void refresh(const WaitingCall& waiting,
               const RelayedWaits* relayed = nullptr);
  const std::string& path() const { return path_; }

 private:
  std::string text(const WaitingCall& waiting,
                   const RelayedWaits* relayed) const;
  // Writes `text` to the temporary name and renames it over the file; on
  // failure, says why (errno's words).
  bool replace(const std::string& text, std::string& why) const;

  const Identity identity_;
  const std::shared_ptr<const CallLog> calls_;
  const std::shared_ptr<const WaitDescription> names_;
  const std::string path_;
  const std::string tempPath_;
  std::chrono::steady_clock::time_point lastWrite_;
  bool written_ = false;
  bool warned_ = false;  // a failure is logged once
};

}  // namespace hetccl
