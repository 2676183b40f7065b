#include "transport/net/net_wire.h"

#include <cstring>

#include "op/call_disagreement.h"
#include "util/wire.h"

namespace hetccl {
namespace {

constexpr uint32_t kHelloMagic = 0x4c45484e;   // "NHEL"
constexpr uint32_t kHeaderMagic = 0x5244484e;  // "NHDR"
constexpr uint32_t kNoticeMagic = 0x544f4e4e;  // "NNOT"

void startMessage(uint8_t* out, uint32_t magic) {
  std::memset(out, 0, kNetMessageBytes);
  storeLe32(out, magic);
}

}  // namespace

// Hello: magic(4) link set(4) from(4) reserved.
void NetHello::encode(uint8_t* out) const {
  startMessage(out, kHelloMagic);
  storeLe32(out + 4, linkSet);
  storeLe32(out + 8, fromRank);
}

std::optional<NetHello> NetHello::decode(const uint8_t* in) {
  if (loadLe32(in) != kHelloMagic) return std::nullopt;
  NetHello h;
  h.linkSet = loadLe32(in + 4);
  h.fromRank = loadLe32(in + 8);
  return h;
}

// Header: magic(4) reserved(4) bytes(8) part bytes(8) call(24) transfer
// bytes(8) reserved.
void NetTransferHeader::encode(uint8_t* out) const {
  startMessage(out, kHeaderMagic);
  storeLe64(out + 8, bytes);
  storeLe64(out + 16, partBytes);
  encodeCall(call, out + 24);
  storeLe64(out + 24 + kEncodedCallBytes, transferBytes);
}

std::optional<NetTransferHeader> NetTransferHeader::decode(const uint8_t* in) {
  if (loadLe32(in) != kHeaderMagic) return std::nullopt;
  NetTransferHeader h;
  h.bytes = loadLe64(in + 8);
  h.partBytes = loadLe64(in + 16);
  h.call = decodeCall(in + 24);
  h.transferBytes = loadLe64(in + 24 + kEncodedCallBytes);
  return h;
}

// Notice: magic(4) reserved(4) sent(24) posted(24) reserved.
void NetDisagreementNotice::encode(uint8_t* out) const {
  startMessage(out, kNoticeMagic);
  encodeCall(sent, out + 8);
  encodeCall(posted, out + 8 + kEncodedCallBytes);
}

std::optional<NetDisagreementNotice> NetDisagreementNotice::decode(
    const uint8_t* in) {
  if (loadLe32(in) != kNoticeMagic) return std::nullopt;
  NetDisagreementNotice n;
  n.sent = decodeCall(in + 8);
  n.posted = decodeCall(in + 8 + kEncodedCallBytes);
  return n;
}

}  // namespace hetccl
