// Ranks of this process (threads) each holding the link set one transport
// built for it, and the exchange that checks a transport's links: every
// byte, in posting order, counted. Shared by the tests of the tcp and ucx
// transports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "op/call_log.h"
#include "support/in_process_oob.h"
#include "support/test_call.h"
#include "support/thread_ranks.h"
#include "transport/transport.h"
#include "util/abort_signal.h"
#include "util/error.h"

namespace hetccl {

template <typename Set>
struct LinkRanks {
  std::unique_ptr<InProcessWorld> world;
  std::vector<std::unique_ptr<InProcessOob>> oobs;
  std::vector<std::shared_ptr<AbortSignal>> aborts;
  std::vector<std::shared_ptr<CallLog>> calls;  // each rank's
  std::vector<std::unique_ptr<Set>> transports;

  std::vector<LinkSet*> sets() const {
    std::vector<LinkSet*> all;
    for (const auto& set : transports) all.push_back(set.get());
    return all;
  }
};

// Builds every rank's set at once (construction is collective): `create`
// gets the rank's Oob, its peers (everyone else unless `peersOf` says), its
// abort signal and its calls. `prepare` may hook the world first.
template <typename Set>
LinkRanks<Set> makeLinkRanks(
    int nranks,
    const std::function<std::unique_ptr<Set>(
        Oob&, const std::vector<int>&, std::shared_ptr<AbortSignal>,
        std::shared_ptr<const CallLog>)>& create,
    std::function<std::vector<int>(int)> peersOf = nullptr,
    std::function<void(InProcessWorld&)> prepare = nullptr) {
  LinkRanks<Set> ranks;
  ranks.world = std::make_unique<InProcessWorld>(nranks);
  if (prepare) prepare(*ranks.world);
  ranks.transports.resize(nranks);
  for (int r = 0; r < nranks; ++r) {
    ranks.oobs.push_back(std::make_unique<InProcessOob>(*ranks.world, r));
    ranks.aborts.push_back(std::make_shared<AbortSignal>());
    ranks.calls.push_back(std::make_shared<CallLog>());
  }
  runRanks(nranks, [&](int r) {
    std::vector<int> peers = peersOf ? peersOf(r) : everyoneBut(r, nranks);
    ranks.transports[r] =
        create(*ranks.oobs[r], peers, ranks.aborts[r], ranks.calls[r]);
  });
  return ranks;
}

constexpr double kLinkWaitSeconds = 20;

// The bytes rank `from` sends to rank `to` in its transfer `index`.
uint8_t pattern(int from, int to, int index, size_t offset);
std::vector<uint8_t> makePayload(int from, int to, int index, size_t bytes);
// The first offset where `data` differs from what `from` sent, or -1.
long long firstMismatch(const std::vector<uint8_t>& data, int from, int to,
                        int index);

// When a link completes its transfers: in any order (tcp and ucx lanes),
// or each before the ones posted after it on the same link (shm rings).
enum class Completion { kAnyOrder, kInPostingOrder };

// Every rank sends `sizes` to every peer and receives the same from each,
// all posted before any wait (waited for last first); checks the data, the
// order, the byte counters and, if asked, the completion order.
void exchangeAll(const std::vector<LinkSet*>& sets,
                 const std::vector<size_t>& sizes,
                 Completion completion = Completion::kAnyOrder);
// The same through a PiecedLink over each link (pieces of at most
// `pieceBytes`), as cross-domain plans use them: the links see the pieces
// of each transfer as such (TransferPiece) and may place them apart.
void exchangeAllInPieces(const std::vector<LinkSet*>& sets,
                         const std::vector<size_t>& sizes, size_t pieceBytes);

// The failure checks every transport's links pass, on `link` (to a peer
// that never answers): a wait ends within 0.2 s of its caller's abort
// signal; of the transport's abort signal `transportAbort` (and later
// transfers fail at once); and a wait that passes its timeout fails with
// ncclRemoteError.
void expectCallerAbortEndsAWait(Link& link);
void expectTransportAbortFailsWaits(Link& link, AbortSignal& transportAbort);
void expectSilentPeerTimesOut(Link& link);

// A combining receive (Link::recvReduce) on `receiver` of what `sender`
// sends plainly ends bitwise as hostReduce of the local buffer and what
// arrived: for `counts` elements of a float32 sum and average, an int32
// max, a uint8 sum and a float64 sum (elements of 1, 4 and 8 bytes), in
// place (the destination is the local buffer) and not, in either order.
void expectCombiningReceivesReduce(Link& sender, Link& receiver,
                                   const std::vector<size_t>& counts);

// Two linked ranks, 0 and 1, as the checks of calls that disagree use
// them (fresh links each: the checks break them).
struct TwoRanks {
  LinkSet* sets[2];
  AbortSignal* aborts[2];
  CallLog* calls[2];
};
// After one small transfer, which moves the link's count off a multiple
// of its lanes, rank 0 sends `out` and rank 1 posts a receive into `in`
// of another size (with `pieceBytes`, through a PiecedLink of such
// pieces at both ends): the receive fails within 5 s, and its error is
// returned. `out` and `in` must outlive the links (a part of either may
// still be pending there).
Error expectSizesThatDifferFailAtOnce(const TwoRanks& ranks,
                                      const std::vector<uint8_t>& out,
                                      std::vector<uint8_t>& in,
                                      size_t pieceBytes = 0);
// Rank 0 sends, rank 1 receives a transfer of the same size whose call
// differs only in its type: the receive fails with ncclInvalidUsage
// naming both calls, and both ranks' abort signals rise (rank 0's within
// a second, though its send completed).
void expectCallsThatDisagreeFailBothEnds(const TwoRanks& ranks);
// The same with sizes that differ (`bytes` sent, half received): the calls
// are reported, not the sizes.
void expectDisagreementBeforeSizes(const TwoRanks& ranks, size_t bytes = 4096);
// Rank 0 sends a transfer of its broadcast #1 (root 0), which rank 1 made
// with root 1 and so never receives: both abort signals rise within a
// second, naming both calls.
void expectUnclaimedCallThatDisagreesFailsBothEnds(const TwoRanks& ranks);

// Link::latestCallFrom: 0 before anything arrived; after all-reduce #1
// and then #2 over both directions (the second in several pieces of
// `bigBytes`), each end's link says the latest call it received; a send
// and a receive (their own numbering) change nothing.
void expectLatestCallFromFollowsCollectives(const TwoRanks& ranks,
                                            size_t bigBytes = 1 << 20);

}  // namespace hetccl
