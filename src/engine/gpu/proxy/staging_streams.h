// The two streams that copy a GPU engine's pieces to and from its staging
// rings, beside the engine's own stream: the copies of sends (up) and of
// receives (down) run while the engine's stream runs the domain steps or
// waits for the network, instead of taking turns with them on one stream.
// Each transfer's copies start after everything the engine's stream had
// been given when the plan posted it; the engine's stream waits for them
// on the rings' counters.
#pragma once

#include <memory>
#include <vector>

#include "runtime/device/device_resources.h"

namespace hetccl {

class StagingStreams {
 public:
  StagingStreams(const DeviceModule& module, void* engineStream);
  ~StagingStreams() { synchronize(); }

  // Waits for both streams (the rings must outlive their copies); says
  // which failed in the log.
  void synchronize() const;

  void* up() const { return up_.handle(); }
  void* down() const { return down_.handle(); }
  // What is enqueued on `side` from now on runs after everything enqueued
  // on the engine's stream so far.
  void followEngine(void* side);
  // Where the engine's stream is now, for a side stream to follow later
  // (followMark), once other work was enqueued in between. A mark holds
  // until the next launch begins.
  size_t markEngine();
  void followMark(void* side, size_t mark);
  // A plan starts: followPlanStart() orders after the engine's stream as
  // it is now.
  void markPlanStart();
  // What is enqueued on `side` from now on runs after everything enqueued
  // on the engine's stream before the plan's start.
  void followPlanStart(void* side);
  // Starts a launch: joinEngine() joins the streams that follow the
  // engine's from now on.
  void beginLaunch() {
    upFollowed_ = downFollowed_ = false;
    marksUsed_ = 0;
  }
  // The engine's stream waits for what either stream was given in this
  // launch: a capture ends only once every stream that joined it (by
  // following the engine's) has been joined back.
  void joinEngine();
  // Whether both streams have run out of work.
  bool idle() const;

 private:
  void follow(void* side, const DeviceEvent& position);

  const DeviceModule& module_;
  void* engine_;
  DeviceStream up_;
  DeviceStream down_;
  // Recorded and waited for at once, so one event serves every transfer.
  DeviceEvent enginePosition_;
  DeviceEvent planStart_;
  DeviceEvent upPosition_;
  DeviceEvent downPosition_;
  // markEngine's events, reused launch after launch: a stream's wait for
  // an event keeps the record it waited for.
  std::vector<std::unique_ptr<DeviceEvent>> marks_;
  size_t marksUsed_ = 0;
  bool upFollowed_ = false;
  bool downFollowed_ = false;
};

}  // namespace hetccl
