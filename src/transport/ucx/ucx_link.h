// The Link that users of the ucx transport hold: each transfer is one UCX
// tagged message whose tag names the link set, the sending rank and the
// transfer's number in its direction, so that the receiver matches the
// peer's transfers in the order both posted them, whatever order UCX
// delivers them in.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "transport/link.h"
#include "transport/ucx/ucx_engine.h"

namespace hetccl {

// [63..56] link set, [55..36] sending rank, [35..0] transfer number.
uint64_t ucxTag(uint8_t linkSet, int sender, uint64_t number);
// The largest rank a tag can name.
constexpr int kMaxUcxRank = (1 << 20) - 1;

class UcxLink : public Link {
 public:
  UcxLink(int rank, int peer, uint8_t linkSet,
          std::shared_ptr<UcxEngine> engine)
      : rank_(rank),
        peer_(peer),
        linkSet_(linkSet),
        engine_(std::move(engine)) {}

  int peer() const override { return peer_; }
  std::shared_ptr<TransferRequest> send(const void* data,
                                        size_t bytes) override;
  std::shared_ptr<TransferRequest> recv(void* data, size_t bytes) override;
  size_t bytesSent() const override { return bytesSent_.load(); }
  size_t bytesReceived() const override { return bytesReceived_.load(); }

 private:
  const int rank_;
  const int peer_;
  const uint8_t linkSet_;
  // Kept alive, so that a link that outlives its transport fails new
  // transfers instead of crashing.
  const std::shared_ptr<UcxEngine> engine_;
  std::atomic<uint64_t> sends_{0};  // transfers posted each way
  std::atomic<uint64_t> receives_{0};
  std::atomic<size_t> bytesSent_{0};  // counted when posted
  std::atomic<size_t> bytesReceived_{0};
};

}  // namespace hetccl
