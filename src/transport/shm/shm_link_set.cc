#include "transport/shm/shm_link_set.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "transport/peer_list.h"
#include "transport/shm/shm_link.h"
#include "transport/shm/shm_segment.h"
#include "util/collective_setup.h"
#include "util/error.h"
#include "util/log.h"

namespace hetccl {
namespace {

constexpr size_t kNameBytes = 64;

// What each rank tells the others about its segment.
struct SegmentRecord {
  char name[kNameBytes];  // empty: no segment (no peers, or it failed)
  uint64_t bytes;
  uint64_t failed;
};

std::vector<SegmentRecord> gatherRecords(Oob& oob, const ShmSegment& own,
                                         bool failed) {
  std::vector<SegmentRecord> records(oob.nranks());
  SegmentRecord& mine = records[oob.rank()];
  std::memset(&mine, 0, sizeof(mine));
  std::strncpy(mine.name, own.name().c_str(), kNameBytes - 1);
  mine.bytes = own.size();
  mine.failed = failed ? 1 : 0;
  oob.allGather(records.data(), sizeof(SegmentRecord));
  for (SegmentRecord& r : records) r.name[kNameBytes - 1] = '\0';
  return records;
}

}  // namespace

ShmLinkSet::ShmLinkSet(Oob& oob, const std::vector<int>& peers,
                           const ShmLinkSettings& settings,
                           std::shared_ptr<AbortSignal> abort,
                           std::shared_ptr<const PeerLiveness> liveness)
    : rank_(oob.rank()), settings_(settings) {
  if (!abort) abort = std::make_shared<AbortSignal>();

  // 1. Create and format this rank's segment; publish its name.
  std::optional<Error> failure;
  std::vector<int> sortedPeers;
  ShmSegment own;
  captureFailure(failure, [&] {
    sortedPeers = checkedLinkPeers("shm", peers, rank_, oob.nranks());
    if (sortedPeers.empty()) return;
    own = ShmSegment::create(
        ShmSegment::uniqueName("hetccl-link"),
        shm_layout::segmentBytes(settings_, sortedPeers.size()));
    shm_layout::format(own.data(), own.size(), settings_, sortedPeers);
  });
  std::vector<SegmentRecord> records =
      gatherRecords(oob, own, failure.has_value());
  if (failure) throw *failure;
  for (int r = 0; r < oob.nranks(); ++r)
    if (records[r].failed)
      fail(ncclRemoteError,
           "shm transport: rank %d failed while creating its segment (its "
           "error says why)",
           r);

  // 2. Map every peer's segment and find this rank's region in it.
  std::vector<ShmSegment> segments;
  std::vector<ShmPeerRings> rings;
  captureFailure(failure, [&] {
    for (int peer : sortedPeers) {
      const SegmentRecord& record = records[peer];
      if (record.bytes == 0)
        fail(ncclInvalidUsage,
             "shm transport: rank %d links to rank %d, but rank %d has no "
             "shm peers (peer lists must be symmetric)",
             rank_, peer, peer);
      segments.push_back(ShmSegment::open(record.name, record.bytes));
      ShmRingView incoming = shm_layout::regionFor(segments.back().data(),
                                                   record.bytes, rank_, peer);
      rings.push_back(
          {peer, shm_layout::ownRegion(own.data(), peer), incoming});
    }
  });
  // 3. Everyone has mapped what it needs (or failed): drop the names.
  agreeOnSuccess(oob, failure, "shm transport", "mapping its peers' segments");
  own.unlink();
  segments.push_back(std::move(own));

  engine_ = std::make_shared<ShmLinkEngine>(
      rank_, std::move(segments), rings, std::move(abort), std::move(liveness));
  for (size_t i = 0; i < rings.size(); ++i)
    links_[rings[i].peer] =
        std::make_shared<ShmLink>(rings[i].peer, i, engine_);
  LOG_INFO(kLogShm,
           "shm transport (rank %d): %zu link(s), %zu slot(s) of %zu KiB per "
           "ring",
           rank_, links_.size(), settings_.slots, settings_.chunkBytes >> 10);
}

std::shared_ptr<Link> ShmLinkSet::link(int peer) const {
  auto it = links_.find(peer);
  HETCCL_CHECK_ARG(it != links_.end(),
                   "shm transport: rank %d has no link to rank %d", rank_,
                   peer);
  return it->second;
}

}  // namespace hetccl
