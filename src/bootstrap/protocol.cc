#include "bootstrap/protocol.h"

#include <algorithm>

#include "util/error.h"
#include "util/wire.h"

namespace hetccl {
namespace {

constexpr uint32_t kRootHelloMagic = 0x48424348;  // "HCBH"
constexpr uint32_t kRootReplyMagic = 0x52424348;  // "HCBR"
constexpr uint32_t kPeerHelloMagic = 0x48504348;  // "HCPH"
// Both hellos start with magic, version and a u16 (request or reserved),
// then the secret.
constexpr size_t kHelloSecretOffset = 4 + 2 + 2;

uint32_t readMagic(const uint8_t* bytes) {
  return WireReader(bytes, kMagicBytes).u32();
}

void checkVersion(uint16_t version, const char* message) {
  if (version != kBootstrapProtocolVersion)
    fail(ncclInvalidArgument,
         "%s speaks bootstrap protocol version %u, this library version %u "
         "(mixed HetCCL versions?)",
         message, version, kBootstrapProtocolVersion);
}

HelloFormat bootstrapHelloFormat(const char* what,
                                 bool (*hasMagic)(const uint8_t*),
                                 size_t fixedBytes, const char* wrongSecret) {
  return HelloFormat{what,       kMagicBytes,        hasMagic,
                     fixedBytes, kHelloSecretOffset, wrongSecret};
}

}  // namespace

std::vector<uint8_t> encodeRootHello(const RootHello& hello) {
  std::vector<uint8_t> out;
  WireWriter w(&out);
  w.u32(kRootHelloMagic);
  w.u16(kBootstrapProtocolVersion);
  w.u16(static_cast<uint16_t>(hello.request));
  w.bytes(hello.secret.data(), hello.secret.size());
  w.i32(hello.rank);
  w.i32(hello.nranks);
  w.address(hello.listenAddress);
  w.u32(hello.peerInfoBytes);
  return out;
}

bool hasRootHelloMagic(const uint8_t* bytes) {
  return readMagic(bytes) == kRootHelloMagic;
}

RootHelloPrefix decodeRootHelloPrefix(const uint8_t* bytes) {
  WireReader r(bytes, kRootHelloPrefixBytes);
  r.u32();  // the magic, checked by hasRootHelloMagic
  RootHelloPrefix prefix;
  prefix.version = r.u16();
  r.u16();  // the request, checked with the rest of the hello
  r.bytes(prefix.secret.data(), prefix.secret.size());
  return prefix;
}

HelloFormat rootHelloFormat() {
  return bootstrapHelloFormat(
      "a HetCCL bootstrap hello", hasRootHelloMagic, kRootHelloPrefixBytes,
      "wrong secret: the ncclUniqueId this rank used belongs to another "
      "communicator (or was changed)");
}

RootHello decodeRootHello(const uint8_t* bytes) {
  WireReader r(bytes, kRootHelloBytes);
  if (r.u32() != kRootHelloMagic)
    fail(ncclInvalidArgument, "not a HetCCL bootstrap hello (bad magic)");
  checkVersion(r.u16(), "the connecting rank");
  RootHello hello;
  uint16_t request = r.u16();
  if (request != static_cast<uint16_t>(RootRequest::kJoin) &&
      request != static_cast<uint16_t>(RootRequest::kCancel))
    fail(ncclInvalidArgument, "unknown bootstrap request %u", request);
  hello.request = static_cast<RootRequest>(request);
  r.bytes(hello.secret.data(), hello.secret.size());
  hello.rank = r.i32();
  hello.nranks = r.i32();
  hello.listenAddress = r.address();
  hello.peerInfoBytes = r.u32();
  return hello;
}

std::vector<uint8_t> encodeRootError(ncclResult_t code,
                                     const std::string& message) {
  std::vector<uint8_t> out;
  WireWriter w(&out);
  w.u32(kRootReplyMagic);
  w.u32(static_cast<uint32_t>(code));
  size_t length = std::min<size_t>(message.size(), kMaxRootErrorBytes);
  w.u32(static_cast<uint32_t>(length));
  w.bytes(message.data(), length);
  return out;
}

std::vector<uint8_t> encodeRootTable(
    const std::vector<SocketAddress>& addresses,
    const std::vector<uint8_t>& peerInfo, uint32_t peerInfoBytes) {
  std::vector<uint8_t> out;
  WireWriter w(&out);
  w.u32(kRootReplyMagic);
  w.u32(static_cast<uint32_t>(ncclSuccess));
  w.u32(static_cast<uint32_t>(addresses.size()));
  w.u32(peerInfoBytes);
  for (const auto& address : addresses) w.address(address);
  w.bytes(peerInfo.data(), peerInfo.size());
  return out;
}

ncclResult_t decodeRootReplyHeader(const uint8_t* bytes) {
  WireReader r(bytes, kRootReplyHeaderBytes);
  if (r.u32() != kRootReplyMagic)
    fail(ncclRemoteError,
         "the bootstrap root answered with bytes that are "
         "not a HetCCL bootstrap reply");
  uint32_t status = r.u32();
  if (status >= ncclNumResults)
    fail(ncclRemoteError, "the bootstrap root answered with unknown status %u",
         status);
  return static_cast<ncclResult_t>(status);
}

std::vector<uint8_t> encodePeerHello(const PeerHello& hello) {
  std::vector<uint8_t> out;
  WireWriter w(&out);
  w.u32(kPeerHelloMagic);
  w.u16(kBootstrapProtocolVersion);
  w.u16(0);
  w.bytes(hello.secret.data(), hello.secret.size());
  w.i32(hello.from);
  w.i32(hello.to);
  w.i32(hello.nranks);
  return out;
}

bool hasPeerHelloMagic(const uint8_t* bytes) {
  return readMagic(bytes) == kPeerHelloMagic;
}

HelloFormat peerHelloFormat() {
  return bootstrapHelloFormat("a HetCCL peer hello", hasPeerHelloMagic,
                              kPeerHelloBytes,
                              "wrong secret (another communicator?)");
}

PeerHello decodePeerHello(const uint8_t* bytes) {
  WireReader r(bytes, kPeerHelloBytes);
  if (r.u32() != kPeerHelloMagic)
    fail(ncclInvalidArgument, "not a HetCCL peer hello (bad magic)");
  checkVersion(r.u16(), "the connecting rank");
  r.u16();
  PeerHello hello;
  r.bytes(hello.secret.data(), hello.secret.size());
  hello.from = r.i32();
  hello.to = r.i32();
  hello.nranks = r.i32();
  return hello;
}

}  // namespace hetccl
