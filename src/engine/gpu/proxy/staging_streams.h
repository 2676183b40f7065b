// The streams that copy a GPU engine's pieces to and from its staging
// rings, beside the engine's own stream: the copies of sends (up) and of
// receives (down) run while the engine's stream runs the domain steps or
// waits for the network, instead of taking turns with them on one stream.
// Each transfer's copies start after everything the engine's stream had
// been given when the plan posted it; the engine's stream waits for them
// on the rings' counters.
//
// There may be several pairs (HETCCL_STAGING_STREAMS), taken by transfers
// in turn: a stream holds about 1,020 pending operations before an
// enqueue makes the caller wait (bench/gpu_queue_depth.cu), each stream
// its own, so N pairs let N times as many pieces wait without coarser
// copies. Transfers of one ring's lane then raise its stream counter in
// order only because each waits for the counter to reach its first piece
// before it raises it (staged_link.h).
#pragma once

#include <memory>
#include <vector>

#include "runtime/device/device_resources.h"

namespace hetccl {

class StagingStreams {
 public:
  // `pairs` up and down streams (at least one).
  StagingStreams(const DeviceModule& module, void* engineStream, size_t pairs);
  ~StagingStreams() { synchronize(); }

  // Waits for every stream (the rings must outlive their copies); says
  // which failed in the log.
  void synchronize() const;

  size_t pairs() const { return up_.size(); }
  // The stream for the next transfer's copies, in turn.
  void* nextUp() { return next(up_, nextUp_); }
  void* nextDown() { return next(down_, nextDown_); }
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
  void beginLaunch();
  // The engine's stream waits for what any stream was given in this
  // launch: a capture ends only once every stream that joined it (by
  // following the engine's) has been joined back.
  void joinEngine();
  // Whether every stream has run out of work.
  bool idle() const;

 private:
  struct Side {
    explicit Side(const DeviceModule& module) : stream(module), end(module) {}
    DeviceStream stream;
    DeviceEvent end;  // where joinEngine() found it
    bool followed = false;
  };
  static void* next(std::vector<std::unique_ptr<Side>>& sides, size_t& turn);
  Side& sideOf(void* stream);
  void follow(void* side, const DeviceEvent& position);

  const DeviceModule& module_;
  void* engine_;
  std::vector<std::unique_ptr<Side>> up_;
  std::vector<std::unique_ptr<Side>> down_;
  size_t nextUp_ = 0;
  size_t nextDown_ = 0;
  // Recorded and waited for at once, so one event serves every transfer.
  DeviceEvent enginePosition_;
  DeviceEvent planStart_;
  // markEngine's events, reused launch after launch: a stream's wait for
  // an event keeps the record it waited for.
  std::vector<std::unique_ptr<DeviceEvent>> marks_;
  size_t marksUsed_ = 0;
};

}  // namespace hetccl
