// The net transport's own messages, fixed little-endian layouts of
// kNetMessageBytes: the hello that opens each connection (a rank's one
// listen comm accepts every peer, so the hello says who connected), the
// header in front of every transfer (its size and the size of the link's
// transfer it is a share of, how it is cut, and the signature of its call,
// which the receiver compares with its own), and the
// notice that the peer's call disagreed, sent where a header would come.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "op/call_signature.h"

namespace hetccl {

constexpr size_t kNetMessageBytes = 64;

struct NetHello {
  uint32_t linkSet = 0;  // rank 0's random id: stray connections are refused
  uint32_t fromRank = 0;

  void encode(uint8_t* out) const;
  static std::optional<NetHello> decode(const uint8_t* in);
};

struct NetTransferHeader {
  uint64_t bytes = 0;
  uint64_t partBytes = 0;  // the sender's cut: parts of this size, the last
                           // one shorter
  CallSignature call;
  // The link's transfer that these bytes are a share of (NetLink cuts one
  // into a share per lane): ends that cut a transfer differently may still
  // send shares of one size.
  uint64_t transferBytes = 0;

  uint64_t parts() const {
    return partBytes == 0 ? 0 : (bytes + partBytes - 1) / partBytes;
  }
  void encode(uint8_t* out) const;
  static std::optional<NetTransferHeader> decode(const uint8_t* in);
};

// The peer's transfer belonged to `sent`; the receiver's own call of it was
// `posted`.
struct NetDisagreementNotice {
  CallSignature sent;
  CallSignature posted;

  void encode(uint8_t* out) const;
  static std::optional<NetDisagreementNotice> decode(const uint8_t* in);
};

}  // namespace hetccl
