// A link as the GPU engine's plans see it: the buffers are GPU memory,
// the link underneath moves host memory. Every transfer is cut into
// pieces that pass through the link's staging rings (staging_ring.h); the
// copies run on the engine's staging streams (staging_streams.h), enqueued
// when the plan posts the transfer, after what the engine's stream had
// been given by then:
//   send: the up stream waits for free slots, copies pieces into them
//         and raises the ring's stream counter; the proxy sends them. A
//         send out of an input the plan only reads (unchanged_inputs.h)
//         starts after the plan's start rather than after what the
//         engine's stream had been given by then. Waiting for the request
//         makes the engine's stream wait until the pieces are copied
//         (then the plan may reuse its buffer).
//   recv: the proxy receives the pieces into their slots as slots free
//         up; the down stream waits for them, copies them to the GPU and
//         raises the ring's stream counter, after what the engine's
//         stream had been given when the plan posted the receive. Waiting
//         for the request makes the engine's stream wait for that counter.
// Each copy, with its wait and counter write, takes one piece, or a run of
// pieces whose slots follow each other (slot_runs.h; StagingPath::
// piecesPerCopy), never with a send's first or a receive's last piece.
// With several pairs of staging streams, transfers take them in turn, and
// each waits for its lane's stream counter to reach its first piece
// before it raises the counter, so that the counter passes pieces in order.
// So a launch enqueues all of its GPU work before it returns, and only the
// proxy (the network) runs afterwards.
//
// Every wait for a peer is enqueued where the plan waits (a receive's
// copies when the plan waits for it, or the launch ends), never where it
// posts: streams may share one hardware queue (always with
// CUDA_DEVICE_MAX_CONNECTIONS=1, as Megatron-LM sets it; whenever a
// process has more streams than queues), and a queue runs its work in the
// order it was enqueued, so a wait for the peer's bytes enqueued before
// this rank's own send would hold the send back, and the peer, waiting
// for it in turn, would never send. Enqueued in the plan's order, the
// GPU's work completes even if it all runs in one queue, as the plan does
// on a CPU rank's one thread. A lane's receives are enqueued in piece
// order, which keeps the ring's slots in order: a wait for one first
// enqueues those posted before it on that link.
//
// A small transfer (one piece of at most StagingPath::lowLatencyMaxBytes)
// skips the staging streams: one kernel on the engine's stream
// (DeviceModule's stagedCopy) waits for the ring as the staging stream
// would, copies and raises the ring's stream counter, so the hand-over
// costs one step of the stream instead of a wait, a copy, a write and the
// engine's wait for them on another stream. A send's kernel runs where
// the plan posts it; a receive's where the plan waits for it (or the
// launch ends), since a kernel waiting for the peer's bytes holds back
// everything behind it on the stream, sends included. A lane (one
// direction of the link) takes such kernels until, in a launch, it has
// posted as many pieces as the ring has slots or one piece went through a
// staging stream: the kernels then never wait for a slot that this launch
// has yet to free, and the stream counter is raised in piece order (a
// staging stream's later piece waits for the kernels' earlier ones, which
// were enqueued before it).
//
// Pieces are numbered on from launch to launch, until the engine first
// captures a launch in a CUDA graph.
// From then on every launch numbers them from 0, and its stream puts the
// counters of the rings it used back to 0 at its end: a replay finds
// them as the capture did. A launch with a script (staged_launch_script.h)
// leaves its pieces there, for the proxy to take when the stream gets
// there.
//
// Pieces are cut as PiecedLink cuts them (algo/pieced_link.h) and each is
// one transfer of the link underneath, so a peer whose side is a CPU rank
// or stages differently sees the same messages.
//
// A link that moves GPU memory itself (UCX with CUDA or ROCm:
// Link::movesGpuMemory) skips the copies but keeps the handover: its
// lanes' rings have counters and no slots, the engine's stream raises the
// stream counter when it reaches a transfer (a send's bytes are there, a
// receive's buffer is free), the proxy then posts the pieces on the GPU
// buffer itself and raises the proxy counter as they complete, and
// waiting for the request makes the engine's stream wait for that.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "algo/pieced_link.h"
#include "engine/gpu/proxy/slot_runs.h"
#include "engine/gpu/proxy/staged_launch_script.h"
#include "engine/gpu/proxy/staging_proxy.h"
#include "engine/gpu/proxy/staging_ring.h"
#include "engine/gpu/proxy/staging_streams.h"
#include "engine/gpu/proxy/unchanged_inputs.h"
#include "engine/gpu/stream_timeline.h"
#include "runtime/device/device_module.h"
#include "transport/link.h"

namespace hetccl {

// What every staged link of one engine shares.
struct StagingPath {
  const DeviceModule& module;
  void* stream;  // the engine's
  StagingStreams& copies;
  StagingProxy& proxy;
  size_t largestPiece;  // of the links' pieces: the largest slot
  size_t slots;
  StreamTimeline* timeline;  // null unless HETCCL_ENGINE_TIMELINE
  // The gate of the pieces posted now (StagingProxy::Job::gate).
  const uint64_t* launchGate;
  MemoryKind deviceMemory;  // the GPU's (host for an emulated one)
  // The engine's domain steps (null: a domain of one GPU): each piece
  // remembers how many came before its stream work.
  const DomainStepLog* domainSteps = nullptr;
  // The running plan's inputs that it only reads (null: none): sends out
  // of them follow the plan's start, not the engine's stream.
  const UnchangedInputs* unchangedInputs = nullptr;
  // Transfers of at most this many bytes, in one piece, are copied by a
  // kernel on the engine's stream (0: never; HETCCL_STAGED_LL_MAX).
  size_t lowLatencyMaxBytes = 0;
  // A staging copy moves at most this many pieces whose slots follow each
  // other (slot_runs.h; HETCCL_STAGED_COPY_PIECES).
  size_t piecesPerCopy = 1;
  // ... once at least this many of a lane's pieces wait for its staging
  // stream (runsFrom in slot_runs.h; HETCCL_STAGED_RUNS_FROM).
  uint64_t runsFrom = 0;
};

class StagedLink : public LinkOver {
 public:
  // Over the link beneath `pieced`, cutting as it does. Throws what the
  // link's movesGpuMemory() throws.
  StagedLink(const std::shared_ptr<PiecedLink>& pieced, const StagingPath& path,
             StagingRings& rings);

  // Whether the GPU buffers go to the link as they are (no copies).
  bool direct() const { return direct_; }
  // Each piece carries `call` to the link, which the proxy posts it on.
  std::shared_ptr<TransferRequest> send(const void* data, size_t bytes,
                                        const CallSignature& call,
                                        TransferPiece piece = {}) override;
  std::shared_ptr<TransferRequest> recv(void* data, size_t bytes,
                                        const CallSignature& call,
                                        TransferPiece piece = {}) override;

  // The end of a launch: the engine's stream waits until every received
  // piece is copied to the GPU and the proxy has sent every staged one,
  // so that the bytes are counted when the launch is done and finalize
  // finds nothing in flight.
  void finishLaunch();

  // Enqueues the copies of every receive the plan has not waited for: all
  // links' before any link's finishLaunch().
  void enqueuePendingReceives();

  // Starts enqueueing a launch. `perLaunch`: its pieces are numbered from
  // 0, and finishLaunch() puts the rings' counters back to 0. `script`:
  // its pieces go there, not to the proxy (null: to the proxy).
  void beginLaunch(bool perLaunch, StagedLaunchScript* script);

 private:
  // A receive whose copies are not enqueued yet.
  struct PendingReceive {
    uint64_t piece;  // its first
    char* target;
    size_t bytes;
    std::vector<char*> slots;  // its pieces', as they were posted
    // Copied by a kernel on the engine's stream, or by the down stream
    // after the engine's stream as it was at the post (a StagingStreams
    // mark).
    bool byKernel;
    size_t enginePosition;
  };
  // One direction of the link: its ring, once opened.
  struct Lane {
    StagingRing* ring = nullptr;
    StagingProxy::Queue* queue = nullptr;
    uint64_t pieces = 0;   // pieces posted so far
    uint64_t awaited = 0;  // pieces the engine's stream waited to see through
    // This launch's: the pieces posted before it, whether a piece went
    // through a staging stream or a kernel, and its receives not enqueued
    // yet (in piece order).
    uint64_t launchStart = 0;
    bool staged = false;
    bool kernelCopied = false;
    std::vector<PendingReceive> pending;
  };

  Lane& opened(Lane& lane, StagingProxy::Direction direction);
  // Whether a transfer of `bytes` on `lane` is copied by a kernel.
  bool copiedByKernel(const Lane& lane, size_t bytes) const;
  std::shared_ptr<TransferRequest> sendByKernel(Lane& lane, const char* source,
                                                size_t bytes,
                                                const CallSignature& call);
  std::shared_ptr<TransferRequest> recvByKernel(Lane& lane, char* target,
                                                size_t bytes,
                                                const CallSignature& call);
  // Enqueues the pending receives up to and including the one that
  // starts at piece `first`.
  void enqueueReceivesThrough(uint64_t first);
  void enqueueKernelReceive(const PendingReceive& receive);
  void enqueueStagedReceive(const PendingReceive& receive);
  void enqueueStagedCopy(const hetcclDeviceStagedCopy& copy, const char* what);
  void awaitEarlierPieces(void* stream, const Lane& lane, uint64_t first) const;
  // The most pieces one copy takes for a transfer from piece `first` on
  // `lane`: runs only while the lane's staging stream lags behind.
  size_t piecesPerCopy(const Lane& lane, uint64_t first) const;
  void copyRun(char* dst, size_t dpitch, const char* src, size_t spitch,
               const SlotRun& run, void* stream, const char* what) const;
  // A staged transfer's pieces, in the slots they were posted with.
  std::vector<StagedPiece> piecesIn(size_t bytes,
                                    const std::vector<char*>& slots) const;
  // The end of a launch whose pieces are numbered per launch: once the
  // proxy has sent the last piece, one kernel puts both rings' counters
  // back to 0.
  void resetCounters();
  std::shared_ptr<TransferRequest> postDirect(Lane& lane,
                                              StagingProxy::Direction direction,
                                              char* data, size_t bytes,
                                              const CallSignature& call);
  // `buffer`: the piece's slot, or its GPU memory on a direct link.
  void post(const Lane& lane, uint64_t piece, size_t bytes,
            const CallSignature& call, TransferPiece of, char* buffer);
  // The counter that passes a piece once its transfer is done for the
  // engine's stream.
  const uint64_t* doneCounter(const Lane& lane) const;
  void awaitThrough(Lane& lane, const uint64_t* counter, const char* what);
  void check(int status, const char* what) const;

  const std::shared_ptr<PiecedLink> pieced_;  // its cutting rule
  StagingPath path_;
  StagingRings& rings_;
  uint64_t* const counters_;  // StagingRings::linkCounters
  const bool direct_;
  Lane sends_;
  Lane receives_;
  bool perLaunch_ = false;
  StagedLaunchScript* script_ = nullptr;
};

}  // namespace hetccl
