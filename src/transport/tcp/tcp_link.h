// The Link that users of the tcp transport hold: posts transfers to the
// transport's progress engine. It keeps the engine object alive, so a link
// that outlives its transport fails new transfers instead of crashing.
#pragma once

#include <memory>

#include "transport/link.h"
#include "transport/tcp/striped_channel.h"
#include "transport/tcp/tcp_engine.h"

namespace hetccl {

class TcpLink : public Link {
 public:
  TcpLink(int peer, size_t channel, std::shared_ptr<TcpEngine> engine,
          std::shared_ptr<const LinkCounters> counters)
      : peer_(peer),
        channel_(channel),
        engine_(std::move(engine)),
        counters_(std::move(counters)) {}

  int peer() const override { return peer_; }
  std::shared_ptr<TransferRequest> send(const void* data,
                                        size_t bytes) override;
  std::shared_ptr<TransferRequest> recv(void* data, size_t bytes) override;
  size_t bytesSent() const override;
  size_t bytesReceived() const override;

 private:
  const int peer_;
  const size_t channel_;
  const std::shared_ptr<TcpEngine> engine_;
  const std::shared_ptr<const LinkCounters> counters_;
};

}  // namespace hetccl
