// A link as the GPU engine's plans see it: the buffers are GPU memory,
// the link underneath moves host memory. A send is copied from the GPU to
// a pinned slot on the engine's stream, and the proxy posts the slot once
// the stream got there; a receive lands in a slot and, when the plan waits
// for it, is copied to the GPU on the stream (so what the plan enqueues
// next sees it). Whether a transfer needs a slot is the link's property: a
// link that reads and writes GPU memory itself (RDMA) skips this class,
// not the engine.
#pragma once

#include <memory>

#include "engine/gpu/send_proxy.h"
#include "engine/gpu/staging_pool.h"
#include "transport/link.h"

namespace hetccl {

// What every staged link of one engine shares.
struct StagingPath {
  const DeviceModule& module;
  void* stream;
  StreamProgress& progress;
  StagingPool& pool;
  SendProxy& proxy;
  const AbortSignal& abort;
  double timeoutSeconds;
};

class StagedLink : public Link {
 public:
  StagedLink(std::shared_ptr<Link> link, const StagingPath& path)
      : link_(std::move(link)), path_(path) {}

  int peer() const override { return link_->peer(); }
  std::shared_ptr<TransferRequest> send(const void* data,
                                        size_t bytes) override;
  std::shared_ptr<TransferRequest> recv(void* data, size_t bytes) override;
  size_t bytesSent() const override { return link_->bytesSent(); }
  size_t bytesReceived() const override { return link_->bytesReceived(); }

 private:
  std::shared_ptr<Link> link_;
  StagingPath path_;
};

}  // namespace hetccl
