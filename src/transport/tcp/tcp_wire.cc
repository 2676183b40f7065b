#include "transport/tcp/tcp_wire.h"

#include <cstring>

#include "op/call_disagreement.h"
#include "util/error.h"
#include "util/wire.h"

namespace hetccl {
namespace {

constexpr uint32_t kEndpointMagic = 0x50435448;  // "HTCP"
constexpr uint32_t kHelloMagic = 0x4c454854;     // "THEL"
constexpr uint32_t kStripeMagic = 0x53495254;    // "TRIS"
constexpr uint32_t kNoticeMagic = 0x45544f4e;    // "NOTE"
constexpr size_t kHelloSecretOffset = 24;

bool hasHelloMagic(const uint8_t* in) { return loadLe32(in) == kHelloMagic; }

// A record of `bytes` with `magic` in front; its reserved bytes stay zero.
void startRecord(uint8_t* out, size_t bytes, uint32_t magic) {
  std::memset(out, 0, bytes);
  storeLe32(out, magic);
}

}  // namespace

// Endpoint: magic(4) sockets(4) stripe(4) threads(4) address(24)
// secret(16) reserved(8).
void TcpEndpoint::encode(uint8_t* out) const {
  startRecord(out, kEncodedBytes, kEndpointMagic);
  storeLe32(out + 4, socketsPerLink);
  storeLe32(out + 8, stripeBytes);
  storeLe32(out + 12, threads);
  address.encode(out + 16);
  std::memcpy(out + 40, secret.data(), secret.size());
  storeLe32(out + 56, splitBytes);
}

TcpEndpoint TcpEndpoint::decode(const uint8_t* in, int rank) {
  if (loadLe32(in) != kEndpointMagic)
    fail(ncclInternalError,
         "tcp transport setup: rank %d sent no endpoint record (an "
         "incompatible HetCCL build?)",
         rank);
  TcpEndpoint e;
  e.socketsPerLink = loadLe32(in + 4);
  e.stripeBytes = loadLe32(in + 8);
  e.threads = loadLe32(in + 12);
  e.address = SocketAddress::decode(in + 16);
  std::memcpy(e.secret.data(), in + 40, e.secret.size());
  e.splitBytes = loadLe32(in + 56);
  return e;
}

// Hello: magic(4) from(4) to(4) index(4) sockets(4) reserved(4) secret(16).
void TcpHello::encode(uint8_t* out) const {
  startRecord(out, kEncodedBytes, kHelloMagic);
  storeLe32(out + 4, fromRank);
  storeLe32(out + 8, toRank);
  storeLe32(out + 12, socketIndex);
  storeLe32(out + 16, socketsPerLink);
  std::memcpy(out + kHelloSecretOffset, secret.data(), secret.size());
}

std::optional<TcpHello> TcpHello::decode(const uint8_t* in) {
  if (!hasHelloMagic(in)) return std::nullopt;
  TcpHello h;
  h.fromRank = loadLe32(in + 4);
  h.toRank = loadLe32(in + 8);
  h.socketIndex = loadLe32(in + 12);
  h.socketsPerLink = loadLe32(in + 16);
  std::memcpy(h.secret.data(), in + kHelloSecretOffset, h.secret.size());
  return h;
}

HelloFormat TcpHello::format() {
  return HelloFormat{"a HetCCL tcp transport hello",
                     sizeof(kHelloMagic),
                     hasHelloMagic,
                     kEncodedBytes,
                     kHelloSecretOffset,
                     "wrong communicator secret"};
}

// Stripe header: magic(4) length(4) stripe(8) transfer bytes(8) call(24)
// transfer(8).
void StripeHeader::encode(uint8_t* out) const {
  startRecord(out, kEncodedBytes, kStripeMagic);
  storeLe32(out + 4, length);
  storeLe64(out + 8, stripe);
  storeLe64(out + 16, transferBytes);
  encodeCall(call, out + 24);
  storeLe64(out + 48, transfer);
}

std::optional<StripeHeader> StripeHeader::decode(const uint8_t* in) {
  if (loadLe32(in) != kStripeMagic) return std::nullopt;
  StripeHeader h;
  h.length = loadLe32(in + 4);
  h.stripe = loadLe64(in + 8);
  h.transferBytes = loadLe64(in + 16);
  h.call = decodeCall(in + 24);
  h.transfer = loadLe64(in + 48);
  return h;
}

// Notice: magic(4) reserved(4) sent(24) posted(24).
void DisagreementNotice::encode(uint8_t* out) const {
  startRecord(out, kEncodedBytes, kNoticeMagic);
  encodeCall(sent, out + 8);
  encodeCall(posted, out + 8 + kEncodedCallBytes);
}

std::optional<DisagreementNotice> DisagreementNotice::decode(
    const uint8_t* in) {
  if (loadLe32(in) != kNoticeMagic) return std::nullopt;
  DisagreementNotice n;
  n.sent = decodeCall(in + 8);
  n.posted = decodeCall(in + 8 + kEncodedCallBytes);
  return n;
}

}  // namespace hetccl
