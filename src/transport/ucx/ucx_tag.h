// The 64-bit tag of a ucx link's message. It names the link set, the
// sending rank, the transfer (counted per link and direction, wrapping)
// and which part of the transfer the message is, so the receiver matches
// the peer's transfers in the order both posted them, whatever order UCX
// delivers them in. It also carries how many parts the sender cut the
// transfer into: receives match on everything else and compare that count
// themselves, so transfers of different sizes are reported as a mismatch
// instead of matching the wrong parts. Two part numbers no data part uses
// mark the link's control messages: the signature of a transfer's call,
// sent on the pair's home lane ahead of the transfer's parts, and the
// notice that a rank's call disagreed with the peer's.
//
//   [63..56] link set  [55..36] sender  [35..16] transfer
//   [15..8] part       [7..0] parts - 1
#pragma once

#include <cstdint>

namespace hetccl {

// The largest rank a tag can name.
constexpr int kMaxUcxRank = (1 << 20) - 1;
// The most parts a transfer may be cut into.
constexpr unsigned kMaxUcxParts = 254;
// The parts of control messages.
constexpr unsigned kUcxCallPart = 0xff;
constexpr unsigned kUcxNoticePart = 0xfe;
// The bits a receive matches on: all but the parts count.
constexpr uint64_t kUcxMatchMask = ~uint64_t{0xff};
// The bits a receive of every control message matches on: the link set,
// and a part of kUcxCallPart or kUcxNoticePart.
constexpr uint64_t kUcxControlMask = (uint64_t{0xff} << 56) | 0xfe00;

struct UcxTag {
  uint8_t linkSet = 0;
  int sender = 0;
  uint64_t transfer = 0;  // only its low 20 bits are kept
  unsigned part = 0;      // 0 .. parts - 1
  unsigned parts = 1;     // 1 .. kMaxUcxParts

  uint64_t value() const {
    constexpr uint64_t kTransferMask = (uint64_t{1} << 20) - 1;
    return (uint64_t{linkSet} << 56) | (static_cast<uint64_t>(sender) << 36) |
           ((transfer & kTransferMask) << 16) |
           (static_cast<uint64_t>(part & 0xff) << 8) | ((parts - 1) & 0xff);
  }
  static UcxTag of(uint64_t value) {
    UcxTag tag;
    tag.linkSet = static_cast<uint8_t>(value >> 56);
    tag.sender = static_cast<int>((value >> 36) & kMaxUcxRank);
    tag.transfer = (value >> 16) & ((uint64_t{1} << 20) - 1);
    tag.part = static_cast<unsigned>((value >> 8) & 0xff);
    tag.parts = static_cast<unsigned>(value & 0xff) + 1;
    return tag;
  }
};

}  // namespace hetccl
