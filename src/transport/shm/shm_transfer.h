// One transfer posted on a shm link: the user's buffer (and, for a receive
// that combines, the local buffer and how), how far it has moved, and how
// it ended. Shared by the ring that moves it and the request
// the user holds; only touched under the transport's progress mutex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "op/call_signature.h"
#include "transport/link.h"
#include "transport/shm/shm_link_layout.h"
#include "transport/transfer_name.h"
#include "util/error.h"

namespace hetccl {

class ShmTransfer {
 public:
  // `sequence` numbers the transfers of one direction of one link from 0;
  // a send and a receive with the same number are matched. `call`: the
  // user call the transfer belongs to.
  ShmTransfer(int peer, char* buffer, size_t bytes, uint64_t sequence,
              bool sending, const CallSignature& call)
      : peer_(peer),
        buffer_(buffer),
        bytes_(bytes),
        sequence_(sequence),
        sending_(sending),
        call_(call),
        callDigest_(shmCallDigest(call)) {}

  int peer() const { return peer_; }
  bool sending() const { return sending_; }

  char* buffer() const { return buffer_; }
  size_t bytes() const { return bytes_; }
  uint64_t sequence() const { return sequence_; }
  const CallSignature& call() const { return call_; }
  uint64_t callDigest() const { return callDigest_; }
  // Names the transfer in messages ("a 4096-byte send to rank 3").
  std::string description() const {
    return TransferName{bytes_, sending_, peer_}.text();
  }

  // A receive that combines what arrives with `local` (ShmLink::recvReduce)
  // instead of copying it; null for a plain one.
  const ReceiveCombine* combine() const {
    return combine_ ? &*combine_ : nullptr;
  }
  const char* local() const { return local_; }
  void combineWith(const char* local, const ReceiveCombine& combine) {
    local_ = local;
    combine_ = combine;
  }

  size_t moved() const { return moved_; }
  size_t remaining() const { return bytes_ - moved_; }
  void advance(size_t n) { moved_ += n; }

  bool pending() const { return !done_ && !error_; }
  bool done() const { return done_; }
  void complete() { done_ = true; }
  // The first failure wins.
  void failWith(const Error& error) {
    if (pending()) error_ = error;
  }
  // Throws the failure, if any, naming the transfer.
  void throwIfFailed() const;

 private:
  const int peer_;
  char* const buffer_;
  const size_t bytes_;
  const uint64_t sequence_;
  const bool sending_;
  const CallSignature call_;
  const uint64_t callDigest_;
  const char* local_ = nullptr;
  std::optional<ReceiveCombine> combine_;
  size_t moved_ = 0;
  bool done_ = false;
  std::optional<Error> error_;
};

}  // namespace hetccl
