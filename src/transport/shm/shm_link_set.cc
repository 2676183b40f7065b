#include "transport/shm/shm_link_set.h"

#include <algorithm>

#include "shm/segment_exchange.h"
#include "transport/peer_list.h"
#include "transport/shm/shm_link.h"
#include "util/cpu_cores.h"
#include "util/error.h"
#include "util/log.h"
#include "util/params.h"

namespace hetccl {

ShmLinkSet::ShmLinkSet(Oob& oob, const std::vector<int>& peers,
                       const ShmLinkSettings& settings,
                       std::shared_ptr<AbortSignal> abort,
                       std::shared_ptr<const PeerLiveness> liveness,
                       std::shared_ptr<const CallLog> calls, int hostRanks)
    : rank_(oob.rank()), settings_(settings) {
  if (!abort) abort = std::make_shared<AbortSignal>();

  std::vector<int> sortedPeers;
  void* ownBase = nullptr;
  std::vector<ShmPeerRings> rings;
  SegmentExchange exchange;
  exchange.what = "shm transport";
  exchange.namePrefix = "hetccl-link";
  exchange.ownBytes = [&] {
    sortedPeers = checkedLinkPeers("shm", peers, rank_, oob.nranks());
    if (sortedPeers.empty()) return size_t{0};
    return shm_layout::segmentBytes(settings_, sortedPeers.size());
  };
  exchange.sizedBy = format(
      "HETCCL_SHM_LINK_SLOTS=%zu and HETCCL_SHM_LINK_CHUNK=%s for each of "
      "%zu peer(s)",
      settings_.slots,
      sizeText(static_cast<int64_t>(settings_.chunkBytes)).c_str(),
      peers.size());
  exchange.format = [&](ShmSegment& own) {
    shm_layout::format(own.data(), own.size(), settings_, sortedPeers);
    ownBase = own.data();
  };
  exchange.maps = [&](int r) {
    return std::binary_search(sortedPeers.begin(), sortedPeers.end(), r);
  };
  // Each peer's segment holds this rank's incoming ring.
  exchange.mapped = [&](int peer, ShmSegment& segment) {
    rings.push_back(
        {peer, shm_layout::ownRegion(ownBase, peer),
         shm_layout::regionFor(segment.data(), segment.size(), rank_, peer)});
  };
  std::vector<ShmSegment> byRank;
  exchangeSegments(oob, exchange, byRank);
  std::vector<ShmSegment> segments;
  for (ShmSegment& segment : byRank)
    if (segment.data() != nullptr) segments.push_back(std::move(segment));

  const bool progressThread =
      !rings.empty() &&
      settings_.usesProgressThread(availableCores(), hostRanks);
  engine_ = std::make_shared<ShmLinkProgress>(
      rank_, std::move(segments), rings, std::move(abort), std::move(liveness),
      std::move(calls), progressThread);
  for (size_t i = 0; i < rings.size(); ++i)
    links_[rings[i].peer] =
        std::make_shared<ShmLink>(rings[i].peer, i, engine_);
  LOG_INFO(kLogShm,
           "shm transport (rank %d): %zu link(s), %zu slot(s) of %zu KiB per "
           "ring, %s",
           rank_, links_.size(), settings_.slots, settings_.chunkBytes >> 10,
           progressThread
               ? "moved by a progress thread (HETCCL_SHM_LINK_THREAD)"
               : "moved while the rank posts or waits");
}

std::shared_ptr<Link> ShmLinkSet::link(int peer) const {
  auto it = links_.find(peer);
  HETCCL_CHECK_ARG(it != links_.end(),
                   "shm transport: rank %d has no link to rank %d", rank_,
                   peer);
  return it->second;
}

}  // namespace hetccl
