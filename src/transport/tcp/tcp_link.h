// The Link that users of the tcp transport hold: posts transfers to the
// transport's progress engines, one per lane of the link (a share of its
// sockets with a thread of its own), placed by LanePlacement: parts of at
// least HETCCL_TCP_SPLIT bytes, one per lane at most, the first on the pair's
// home lane. Parts start on multiples of 64 bytes, so that a receive that
// combines what arrives with a local buffer (recvReduce, where the stripes
// hold whole elements too) finds whole elements in each.
// It keeps the engines alive, so a link that outlives its transport fails
// new transfers instead of crashing.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "transport/lane_placement.h"
#include "transport/link.h"
#include "transport/tcp/striped_channel.h"
#include "transport/tcp/tcp_progress_thread.h"

namespace hetccl {

class TcpLink : public Link {
 public:
  // Waits for transfers of up to kPolledBytes poll for `poll` before they
  // sleep (HETCCL_TCP_POLL_US).
  static constexpr size_t kPolledBytes = 64 * 1024;

  // Every part a link cuts starts on a multiple of this many bytes.
  static constexpr size_t kPartAlignment = 64;

  TcpLink(int rank, int peer, size_t channel,
          std::vector<std::shared_ptr<TcpProgressThread>> lanes,
          std::shared_ptr<const LinkCounters> counters,
          std::chrono::microseconds poll, size_t stripeBytes, size_t splitBytes)
      : peer_(peer),
        channel_(channel),
        lanes_(std::move(lanes)),
        placement_(rank, peer, lanes_.size(), splitBytes),
        counters_(std::move(counters)),
        poll_(poll),
        stripesHoldWholeElements_(
            stripeBytes % StripedChannel::kMaxElementBytes == 0) {}

  int peer() const override { return peer_; }
  std::shared_ptr<TransferRequest> send(const void* data, size_t bytes,
                                        const CallSignature& call,
                                        TransferPiece piece = {}) override;
  std::shared_ptr<TransferRequest> recv(void* data, size_t bytes,
                                        const CallSignature& call,
                                        TransferPiece piece = {}) override;
  // Wherever HETCCL_TCP_CHUNK is a multiple of 8 bytes (it is by default).
  bool reducesOnReceive() const override { return stripesHoldWholeElements_; }
  std::shared_ptr<TransferRequest> recvReduce(
      void* dst, const void* local, size_t bytes, const ReceiveCombine& combine,
      const CallSignature& call, TransferPiece piece = {}) override;
  size_t bytesSent() const override;
  size_t bytesReceived() const override;
  uint64_t latestCallFrom() const override;

 private:
  std::shared_ptr<TransferRequest> post(
      TcpProgressThread::Direction direction, char* data, size_t bytes,
      const CallSignature& call, std::atomic<uint64_t>& count,
      const std::optional<ReceiveCombining>& combining = std::nullopt);

  const int peer_;
  const size_t channel_;  // this link's channel in every lane's engine
  const std::vector<std::shared_ptr<TcpProgressThread>> lanes_;
  const LanePlacement placement_;
  const std::shared_ptr<const LinkCounters> counters_;
  const std::chrono::microseconds poll_;
  const bool stripesHoldWholeElements_;
  std::atomic<uint64_t> sends_{0};  // transfers posted each way
  std::atomic<uint64_t> receives_{0};
};

}  // namespace hetccl
