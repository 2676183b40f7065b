// Wire formats of the bootstrap: the hello a rank sends to the root, the
// root's answer, and the hello and frame header of rank-to-rank
// connections. All fields little-endian (see wire.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bootstrap/unique_id.h"
#include "nccl.h"
#include "util/authenticated_acceptor.h"
#include "util/socket_address.h"

namespace hetccl {

constexpr uint16_t kBootstrapProtocolVersion = 1;

// Largest per-rank peer info payload the root accepts: a communicator's
// PeerInfo is about a hundred bytes, and the root holds one per rank that
// joins, so bigger claims come from garbage or an attacker, not a rank.
constexpr uint32_t kMaxPeerInfoBytes = 4096;

// The most ranks a communicator may have (ncclCommInitRank refuses more
// with ncclInvalidArgument, and the root refuses a hello that claims
// more): beyond any machine built, and as many as the ucx transport's tags
// can name (ucx_tag.h). Absurd counts come from a bug or a stranger.
constexpr int32_t kMaxRanks = 1 << 20;

// Rank-to-rank frames with this tag are not messages but notices: "I gave
// up the exchange <tag> because <reason>" (u32 tag, then the reason's
// bytes). Exchange tags never take this value.
constexpr uint32_t kAbandonedExchangeTag = 0xffffffffu;
// A notice's reason is cut to this many bytes.
constexpr size_t kMaxAbandonReasonBytes = 512;

// --- Rank -> root ---------------------------------------------------------

enum class RootRequest : uint16_t {
  kJoin = 1,    // followed by peerInfoBytes of peer info
  kCancel = 2,  // tells a root nobody needs to exit
};

struct RootHello {
  RootRequest request = RootRequest::kJoin;
  Secret secret{};
  int32_t rank = -1;
  int32_t nranks = 0;
  SocketAddress listenAddress;  // where this rank accepts peer connections
  uint32_t peerInfoBytes = 0;
};

// magic, version, request, secret, rank, nranks, address, peerInfoBytes.
constexpr size_t kRootHelloBytes = 4 + 2 + 2 + 16 + 4 + 4 + 24 + 4;
constexpr size_t kMagicBytes = 4;

// What every version of the hello starts with (magic, version, request,
// secret), and must keep starting with: a root reads it before anything
// else, so that it tells a rank of another HetCCL version that holds the
// id's secret (a part of this job that cannot join) from a stranger.
struct RootHelloPrefix {
  uint16_t version = 0;
  Secret secret{};
};
constexpr size_t kRootHelloPrefixBytes = 4 + 2 + 2 + 16;
RootHelloPrefix decodeRootHelloPrefix(const uint8_t* bytes);
// The root's acceptor reads the prefix first and checks its secret.
HelloFormat rootHelloFormat();

std::vector<uint8_t> encodeRootHello(const RootHello& hello);
// Checks the first kMagicBytes of a hello.
bool hasRootHelloMagic(const uint8_t* bytes);
// Decodes kRootHelloBytes. Throws ncclInvalidArgument naming what is wrong
// (version, request, address); the secret is left to the caller to judge.
RootHello decodeRootHello(const uint8_t* bytes);

// --- Root -> rank ---------------------------------------------------------
// magic, status (ncclResult_t); then for an error: length, message; for
// success: nranks, peerInfoBytes, nranks addresses, nranks payloads. A
// cancel is acknowledged with a success for 0 ranks.

constexpr size_t kRootReplyHeaderBytes = 4 + 4;
constexpr size_t kRootTableHeaderBytes = 4 + 4;
constexpr uint32_t kMaxRootErrorBytes = 64 * 1024;

std::vector<uint8_t> encodeRootError(ncclResult_t code,
                                     const std::string& message);
// `peerInfo` holds addresses.size() payloads of peerInfoBytes each.
std::vector<uint8_t> encodeRootTable(
    const std::vector<SocketAddress>& addresses,
    const std::vector<uint8_t>& peerInfo, uint32_t peerInfoBytes);
// Returns the status of a reply header; throws ncclRemoteError if the
// bytes are not a root reply.
ncclResult_t decodeRootReplyHeader(const uint8_t* bytes);

// --- Rank -> rank ---------------------------------------------------------

struct PeerHello {
  Secret secret{};
  int32_t from = -1;
  int32_t to = -1;
  int32_t nranks = 0;
};

// magic, version, reserved, secret, from, to, nranks.
constexpr size_t kPeerHelloBytes = 4 + 2 + 2 + 16 + 4 + 4 + 4;

std::vector<uint8_t> encodePeerHello(const PeerHello& hello);
bool hasPeerHelloMagic(const uint8_t* bytes);
// A rank's acceptor reads the whole hello and checks its secret.
HelloFormat peerHelloFormat();
// Throws ncclInvalidArgument naming what is wrong.
PeerHello decodePeerHello(const uint8_t* bytes);

// Every message between ranks: tag, payload length, payload.
constexpr size_t kFrameHeaderBytes = 4 + 8;

}  // namespace hetccl
