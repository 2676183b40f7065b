// The stall reports and the status file of a communicator of one domain,
// which has no call probe (core/call_probe.h: that is for communicators of
// several domains, whose links it watches). A thread looks every few tens
// of milliseconds at the communicator's WaitingCall (op/waiting_call.h):
// the host collectives' waits for a peer mark it, so the ranks of one
// domain of CPU ranks that wait for a stopped or slow rank name it
// (StallReport), and HETCCL_STATUS_DIR's file is refreshed (StatusFile),
// which for a GPU domain shows the latest call (NCCL's and RCCL's waits are
// on the GPU stream and mark nothing). The communicator makes one only when
// it has something to do: stall reports of a back-end that marks its waits
// (HETCCL_STALL_WARN > 0, several ranks), or a status file.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "core/stall_report.h"
#include "core/status_file.h"
#include "op/waiting_call.h"

namespace hetccl {

class StallWatch {
 public:
  // `status` may be null (no HETCCL_STATUS_DIR).
  StallWatch(std::shared_ptr<const WaitingCall> waiting, StallReport stalls,
             std::unique_ptr<StatusFile> status);
  ~StallWatch();
  StallWatch(const StallWatch&) = delete;
  StallWatch& operator=(const StallWatch&) = delete;

 private:
  void run();

  const std::shared_ptr<const WaitingCall> waiting_;
  StallReport stalls_;                        // the thread's own
  const std::unique_ptr<StatusFile> status_;  // the thread's own

  std::mutex stopMutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace hetccl
