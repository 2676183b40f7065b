// A link as the GPU engine's plans see it: the buffers are GPU memory,
// the link underneath moves host memory. Every transfer is cut into
// pieces that pass through the link's staging rings (staging_ring.h), and
// everything the GPU does for them is enqueued on the engine's stream when
// the plan asks:
//   send: the stream waits for a free slot, copies the piece into it and
//         raises its counter; the proxy sends it. The plan's buffer is free
//         for whatever the stream does next, so the request is done at
//         once.
//   recv: the proxy receives the pieces into their slots as slots free up;
//         waiting for the request enqueues, for it and every receive posted
//         on this link before it, the stream's wait for the pieces and the
//         copies to the GPU (receives are consumed in posting order, which
//         keeps the ring's slots in order; a posted receive's buffer is
//         the link's from the moment it was posted).
// So a launch enqueues all of its GPU work before it returns, and only the
// proxy (the network) runs afterwards. Whether a transfer needs staging is
// the link's property: a link that reads and writes GPU memory itself
// (RDMA) skips this class, not the engine.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "engine/gpu/staging_proxy.h"
#include "engine/gpu/staging_ring.h"
#include "engine/gpu/stream_timeline.h"
#include "transport/link.h"

namespace hetccl {

// What every staged link of one engine shares.
struct StagingPath {
  const DeviceModule& module;
  void* stream;
  StagingProxy& proxy;
  size_t slotBytes;
  size_t slots;
  StreamTimeline* timeline;  // null unless HETCCL_ENGINE_TIMELINE
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

  // Enqueues the copies of every receive posted up to `receive` (its
  // number in posting order).
  void consumeThrough(uint64_t receive);
  // The end of a launch: enqueues the copies of any receive the plan did
  // not wait for, and the stream's wait for the proxy to have sent every
  // piece staged so far, so that the bytes are counted when the launch
  // is done and finalize finds nothing in flight.
  void finishLaunch();

 private:
  // One direction of the link: its ring, once opened.
  struct Lane {
    StagingRing* ring = nullptr;
    StagingProxy::Queue* queue = nullptr;
    uint64_t pieces = 0;   // pieces posted so far
    uint64_t awaited = 0;  // pieces the stream waited to see through
  };
  struct PostedReceive {
    char* target;
    size_t bytes;
    uint64_t firstPiece;
  };

  Lane& opened(Lane& lane, StagingProxy::Direction direction);
  void check(int status, const char* what) const;

  StagingPath path_;
  StagingRings& rings_;
  Lane sends_;
  Lane receives_;
  std::deque<PostedReceive> unconsumed_;
  uint64_t receivesPosted_ = 0;
  uint64_t receivesConsumed_ = 0;
};

}  // namespace hetccl
