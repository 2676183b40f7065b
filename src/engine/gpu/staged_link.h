// A link as the GPU engine's plans see it: the buffers are GPU memory,
// the link underneath moves host memory. Every transfer is cut into
// pieces that pass through the link's staging rings (staging_ring.h); the
// copies run on the engine's staging streams (staging_streams.h), enqueued
// when the plan posts the transfer, after what the engine's stream had
// been given by then:
//   send: the up stream waits for a free slot, copies the piece into it
//         and raises the ring's stream counter; the proxy sends it. Waiting
//         for the request makes the engine's stream wait until the pieces
//         are copied (then the plan may reuse its buffer).
//   recv: the proxy receives the pieces into their slots as slots free up;
//         the down stream waits for each, copies it to the GPU and raises
//         the ring's stream counter. Waiting for the request makes the
//         engine's stream wait for that counter. Receives are copied in
//         posting order, which keeps the ring's slots in order.
// So a launch enqueues all of its GPU work before it returns, and only the
// proxy (the network) runs afterwards. A launch with a script
// (staged_launch_script.h) numbers its pieces from 0 and leaves them to
// the script, which hands them to the proxy when the stream gets there. Whether
// a transfer needs staging is the link's property: a link that reads and writes
// GPU memory itself (RDMA) skips this class, not the engine.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "engine/gpu/staged_launch_script.h"
#include "engine/gpu/staging_proxy.h"
#include "engine/gpu/staging_ring.h"
#include "engine/gpu/staging_streams.h"
#include "engine/gpu/stream_timeline.h"
#include "transport/link.h"

namespace hetccl {

// What every staged link of one engine shares.
struct StagingPath {
  const DeviceModule& module;
  void* stream;  // the engine's
  StagingStreams& copies;
  StagingProxy& proxy;
  size_t slotBytes;
  size_t slots;
  StreamTimeline* timeline;  // null unless HETCCL_ENGINE_TIMELINE
  // The gate of the pieces posted now (StagingProxy::Job::gate).
  const uint64_t* launchGate;
};

// The rings of every staged link of an engine, made on first use and kept
// until the engine goes (after its links: a failed link may still write
// into a slot until its transport stops).
class StagingRings {
 public:
  StagingRing& make(const DeviceModule& module, size_t slotBytes, size_t slots);
  // Raises every ring's proxy counter to the maximum: every stream wait
  // on the rings ends.
  void releaseWaits();

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<StagingRing>> rings_;
};

class StagedLink : public LinkOver {
 public:
  StagedLink(std::shared_ptr<Link> link, const StagingPath& path,
             StagingRings& rings)
      : LinkOver(std::move(link)), path_(path), rings_(rings) {}

  std::shared_ptr<TransferRequest> send(const void* data,
                                        size_t bytes) override;
  std::shared_ptr<TransferRequest> recv(void* data, size_t bytes) override;

  // The end of a launch: the engine's stream waits until every received
  // piece is copied to the GPU and the proxy has sent every staged one,
  // so that the bytes are counted when the launch is done and finalize
  // finds nothing in flight.
  void finishLaunch();

  // The pieces of the launch being enqueued go to `script`, numbered from
  // 0, until endScript(); then the numbering of launches without one
  // goes on where it was.
  void beginScript(StagedLaunchScript& script);
  void endScript();

 private:
  // One direction of the link: its ring, once opened.
  struct Lane {
    StagingRing* ring = nullptr;
    StagingProxy::Queue* queue = nullptr;
    uint64_t pieces = 0;   // pieces posted so far
    uint64_t awaited = 0;  // pieces the engine's stream waited to see through
  };

  Lane& opened(Lane& lane, StagingProxy::Direction direction);
  void post(const Lane& lane, uint64_t piece, size_t bytes);
  void awaitThrough(Lane& lane, const uint64_t* counter, const char* what);
  void check(int status, const char* what) const;

  StagingPath path_;
  StagingRings& rings_;
  Lane sends_;
  Lane receives_;
  StagedLaunchScript* script_ = nullptr;
  Lane unscriptedSends_;
  Lane unscriptedReceives_;
};

}  // namespace hetccl
