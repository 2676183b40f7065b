// The Link that users of the ucx transport hold. Each transfer is one UCX
// tagged message per lane it uses: one of at least kUcxSplitBytes per lane
// is cut into one part per lane (the parts move over separate
// connections), a smaller one goes whole to the next lane in turn. A tag
// names the link set, the sending rank and the part's number on its lane
// and direction, so the receiver matches the peer's transfers in the order
// both posted them, whatever order UCX delivers them in. Both ends count
// their transfers each way alike, so they cut and place them alike.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "transport/link.h"
#include "transport/ucx/ucx_engine.h"

namespace hetccl {

// [63..56] link set, [55..36] sending rank, [35..0] transfer number.
uint64_t ucxTag(uint8_t linkSet, int sender, uint64_t number);
// The largest rank a tag can name.
constexpr int kMaxUcxRank = (1 << 20) - 1;
// Below this many bytes per lane a transfer is not worth cutting.
constexpr size_t kUcxSplitBytes = 256 * 1024;

class UcxLink : public Link {
 public:
  UcxLink(int rank, int peer, uint8_t linkSet,
          std::vector<std::shared_ptr<UcxEngine>> lanes);

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
  // One direction's transfers, counted as a whole (which lane a whole
  // transfer takes) and per lane (the parts' numbers in their tags).
  struct Direction {
    UcxEngine::Direction kind;
    std::atomic<uint64_t> transfers{0};        // posted this way
    std::vector<std::atomic<uint64_t>> parts;  // posted per lane
    explicit Direction(UcxEngine::Direction kind, size_t lanes)
        : kind(kind), parts(lanes) {}
  };

  std::shared_ptr<TransferRequest> post(Direction& direction, char* data,
                                        size_t bytes);

  // Kept alive, so that a link that outlives its transport fails new
  // transfers instead of crashing.
  const std::vector<std::shared_ptr<UcxEngine>> lanes_;
  Direction sends_;
  Direction receives_;
  std::atomic<size_t> bytesSent_{0};  // counted when posted
  std::atomic<size_t> bytesReceived_{0};
};

}  // namespace hetccl
