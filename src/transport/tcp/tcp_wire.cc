#include "transport/tcp/tcp_wire.h"

#include <cstring>

#include "util/error.h"

namespace hetccl {
namespace {

constexpr uint32_t kEndpointMagic = 0x50435448;  // "HTCP"
constexpr uint32_t kHelloMagic = 0x4c454854;     // "THEL"
constexpr uint32_t kStripeMagic = 0x53495254;    // "TRIS"

void putU32(uint8_t* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<uint8_t>(v >> (8 * i));
}

void putU64(uint8_t* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(v >> (8 * i));
}

uint32_t getU32(const uint8_t* in) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(in[i]) << (8 * i);
  return v;
}

uint64_t getU64(const uint8_t* in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(in[i]) << (8 * i);
  return v;
}

}  // namespace

// Endpoint: magic(4) sockets(4) stripe(4) reserved(4) address(24)
// secret(16) reserved(8).
void TcpEndpoint::encode(uint8_t* out) const {
  std::memset(out, 0, kEncodedBytes);
  putU32(out, kEndpointMagic);
  putU32(out + 4, socketsPerLink);
  putU32(out + 8, stripeBytes);
  address.encode(out + 16);
  std::memcpy(out + 40, secret.data(), secret.size());
}

TcpEndpoint TcpEndpoint::decode(const uint8_t* in, int rank) {
  if (getU32(in) != kEndpointMagic)
    fail(ncclInternalError,
         "tcp transport setup: rank %d sent no endpoint record (an "
         "incompatible HetCCL build?)",
         rank);
  TcpEndpoint e;
  e.socketsPerLink = getU32(in + 4);
  e.stripeBytes = getU32(in + 8);
  e.address = SocketAddress::decode(in + 16);
  std::memcpy(e.secret.data(), in + 40, e.secret.size());
  return e;
}

// Hello: magic(4) from(4) to(4) index(4) sockets(4) reserved(4) secret(16).
void TcpHello::encode(uint8_t* out) const {
  std::memset(out, 0, kEncodedBytes);
  putU32(out, kHelloMagic);
  putU32(out + 4, fromRank);
  putU32(out + 8, toRank);
  putU32(out + 12, socketIndex);
  putU32(out + 16, socketsPerLink);
  std::memcpy(out + 24, secret.data(), secret.size());
}

std::optional<TcpHello> TcpHello::decode(const uint8_t* in) {
  if (getU32(in) != kHelloMagic) return std::nullopt;
  TcpHello h;
  h.fromRank = getU32(in + 4);
  h.toRank = getU32(in + 8);
  h.socketIndex = getU32(in + 12);
  h.socketsPerLink = getU32(in + 16);
  std::memcpy(h.secret.data(), in + 24, h.secret.size());
  return h;
}

// Stripe header: magic(4) length(4) stripe(8) transfer bytes(8).
void StripeHeader::encode(uint8_t* out) const {
  putU32(out, kStripeMagic);
  putU32(out + 4, length);
  putU64(out + 8, stripe);
  putU64(out + 16, transferBytes);
}

std::optional<StripeHeader> StripeHeader::decode(const uint8_t* in) {
  if (getU32(in) != kStripeMagic) return std::nullopt;
  StripeHeader h;
  h.length = getU32(in + 4);
  h.stripe = getU64(in + 8);
  h.transferBytes = getU64(in + 16);
  return h;
}

}  // namespace hetccl
