// The Link that users of the net transport hold: each transfer goes to the
// link set's progress thread whole; the thread's channel cuts it into the
// plugin's messages (net_channel.h). Host memory only for now: GPU
// buffers are staged by the GPU engine (movesGpuMemory is false). It keeps
// the thread alive, so that a link that outlives its transport fails new
// transfers instead of crashing.
#pragma once

#include <atomic>
#include <memory>

#include "transport/link.h"
#include "transport/net/net_progress_thread.h"

namespace hetccl {

class NetLink : public Link {
 public:
  NetLink(int peer, std::shared_ptr<NetProgressThread> thread)
      : peer_(peer), thread_(std::move(thread)) {}

  int peer() const override { return peer_; }
  std::shared_ptr<TransferRequest> send(const void* data, size_t bytes,
                                        const CallSignature& call) override;
  std::shared_ptr<TransferRequest> recv(void* data, size_t bytes,
                                        const CallSignature& call) override;
  size_t bytesSent() const override { return bytesSent_.load(); }
  size_t bytesReceived() const override { return bytesReceived_.load(); }
  uint64_t latestCallFrom() const override {
    return thread_->latestCallFrom(peer_);
  }

 private:
  const int peer_;
  const std::shared_ptr<NetProgressThread> thread_;
  std::atomic<size_t> bytesSent_{0};  // counted when posted
  std::atomic<size_t> bytesReceived_{0};
};

}  // namespace hetccl
