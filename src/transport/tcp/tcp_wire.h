// Fixed little-endian layouts of what the tcp transport puts on the wire:
// the record each rank contributes to the setup all-gather, the hello that
// opens every connection, the header in front of every stripe, and the
// notice that a rank sends before it drops a link whose peer's call
// disagreed with its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "op/call_signature.h"
#include "util/authenticated_acceptor.h"
#include "util/secret.h"
#include "util/socket_address.h"

namespace hetccl {

// One rank's slot of the setup all-gather. Rank 0's secret and stripe
// geometry are the ones every rank uses.
struct TcpEndpoint {
  static constexpr size_t kEncodedBytes = 64;

  SocketAddress address;
  Secret secret{};
  uint32_t socketsPerLink = 0;
  uint32_t stripeBytes = 0;
  uint32_t threads = 0;
  uint32_t splitBytes = 0;

  void encode(uint8_t* out) const;
  // Throws ncclInternalError if `in` holds no record (a rank that runs an
  // incompatible build, or a broken out-of-band exchange).
  static TcpEndpoint decode(const uint8_t* in, int rank);
};

// The first bytes on every connection, from the connecting (lower) rank.
struct TcpHello {
  static constexpr size_t kEncodedBytes = 40;

  Secret secret{};
  uint32_t fromRank = 0;
  uint32_t toRank = 0;
  uint32_t socketIndex = 0;
  uint32_t socketsPerLink = 0;

  void encode(uint8_t* out) const;
  // Nothing if the magic is wrong: not one of ours.
  static std::optional<TcpHello> decode(const uint8_t* in);
  // What the acceptor checks itself: the magic and the secret.
  static HelloFormat format();
};

// In front of every stripe's payload. The stripe number, the number and
// size of the link's transfer it belongs to (a lane carries a part of it
// or all of it) and the signature of the call that transfer belongs to let
// the receiver check that the stripe is the one it expects, that both
// ranks made the same call and that both sides posted the same transfer
// with the same size.
struct StripeHeader {
  static constexpr size_t kEncodedBytes = 56;

  uint64_t stripe = 0;
  uint64_t transfer = 0;       // the link's count of transfers this way
  uint64_t transferBytes = 0;  // of the link's transfer, all parts
  uint32_t length = 0;
  CallSignature call;

  void encode(uint8_t* out) const;
  // Nothing if the magic is wrong: the stream is out of step (or holds a
  // notice).
  static std::optional<StripeHeader> decode(const uint8_t* in);
};

// Where a stripe header would come next: the call of a transfer the
// sender of the notice received (`sent`) disagreed with its own
// (`posted`). The last thing on the connection, read even when no receive
// waits, so that the rank whose transfers all went through also fails.
struct DisagreementNotice {
  static constexpr size_t kEncodedBytes = StripeHeader::kEncodedBytes;

  CallSignature sent;
  CallSignature posted;

  void encode(uint8_t* out) const;
  // Nothing if the magic is not the notice's.
  static std::optional<DisagreementNotice> decode(const uint8_t* in);
};

}  // namespace hetccl
