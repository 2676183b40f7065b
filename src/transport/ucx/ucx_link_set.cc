#include "transport/ucx/ucx_link_set.h"

#include <algorithm>
#include <cstring>
#include <random>

#include "transport/lane_placement.h"
#include "transport/peer_list.h"
#include "transport/ucx/ucx_link.h"
#include "util/cpu_cores.h"
#include "util/error.h"
#include "util/log.h"

namespace hetccl {
namespace {

// What every rank tells the others before addresses are exchanged.
struct SetupNotice {
  uint32_t hasPeers;
  uint32_t ready;         // UCX loaded and the workers created
  uint32_t addressBytes;  // the longest of its workers' addresses
  uint32_t linkSet;       // rank 0's choice is every rank's
  uint32_t lanes;         // likewise
  uint32_t partKiB;       // likewise
  uint32_t splitBytes;    // likewise
};

// Each lane's progress thread spins while transfers move, so lanes beyond
// the cores slow every lane down: measured over UCX's tcp at 4 MiB, four
// lanes moved 1.8 to 2.0 GB/s on 2 cores where one moved 3.0, and 5.3 to
// 5.7 on 16 cores where one moved 1.6 to 1.7
// (bench/results/ucx-lanes-parts-2026-12-01.md).
int lanesForCores() {
  constexpr int kCoresPerLane = 4;
  constexpr int kMaxAutoLanes = 4;
  return std::clamp(availableCores() / kCoresPerLane, 1, kMaxAutoLanes);
}

uint8_t randomLinkSetId() {
  std::random_device device;
  return static_cast<uint8_t>(device());
}

}  // namespace

UcxLinkSet::UcxLinkSet(Oob& oob, const std::vector<int>& peers,
                       std::shared_ptr<AbortSignal> abort, UcxSettings settings,
                       std::shared_ptr<const CallLog> calls)
    : rank_(oob.rank()) {
  int lanes = settings.lanes;
  const size_t partBytes = settings.partBytes;
  HETCCL_CHECK_ARG(abort != nullptr, "ucx transport needs an abort signal");
  HETCCL_CHECK_ARG(oob.nranks() - 1 <= kMaxUcxRank,
                   "ucx transport: %d ranks, at most %d supported",
                   oob.nranks(), kMaxUcxRank + 1);
  HETCCL_CHECK_ARG(lanes >= 0 && lanes <= kMaxUcxLanes,
                   "ucx transport: %d lanes, expected 0 (by cores) to %d",
                   lanes, kMaxUcxLanes);
  if (lanes == 0) lanes = lanesForCores();
  const size_t splitBytes =
      settings.splitBytes != 0
          ? settings.splitBytes
          : smallestPartForCores(availableCores(), kUcxFewCoresSplitBytes);
  HETCCL_CHECK_ARG(
      partBytes >= kMinUcxPartBytes && partBytes <= kMaxUcxPartBytes,
      "ucx transport: parts of %zu bytes, expected 64 KiB to 1 GiB", partBytes);
  const std::vector<int> sortedPeers =
      checkedLinkPeers("ucx", peers, rank_, oob.nranks());
  std::vector<SetupNotice> notices(oob.nranks());
  notices[rank_] = {!sortedPeers.empty(),
                    0,
                    0,
                    randomLinkSetId(),
                    static_cast<uint32_t>(lanes),
                    static_cast<uint32_t>(partBytes >> 10),
                    static_cast<uint32_t>(splitBytes)};
  // Rank 0's lane count first: every rank makes that many workers, and
  // cuts transfers as rank 0 says.
  oob.allGather(notices.data(), sizeof(SetupNotice));
  bool anyPeers = false;
  for (const SetupNotice& notice : notices)
    anyPeers = anyPeers || notice.hasPeers;
  if (!anyPeers) return;  // the common case: nothing more to agree on
  const int agreedLanes = static_cast<int>(notices[0].lanes);
  if (agreedLanes < 1 || agreedLanes > kMaxUcxLanes)
    fail(ncclInternalError, "ucx transport: rank 0 sent %d lanes", agreedLanes);
  if (notices[0].splitBytes < kMinSplitBytes)
    fail(ncclInternalError, "ucx transport: rank 0 sent %u-byte parts",
         notices[0].splitBytes);

  std::vector<std::vector<uint8_t>> addresses;
  std::string failure;
  if (!sortedPeers.empty()) {
    try {
      for (int lane = 0; lane < agreedLanes; ++lane) {
        lanes_.push_back(std::make_shared<UcxWorkerThread>(ucxLibrary(), rank_,
                                                           abort, calls));
        addresses.push_back(lanes_.back()->address());
      }
    } catch (const Error& e) {
      failure = e.what();
      lanes_.clear();
      addresses.clear();
    }
  }
  uint32_t mine = 0;
  for (const auto& address : addresses)
    mine = std::max(mine, static_cast<uint32_t>(address.size()));
  notices[rank_].ready = !lanes_.empty();
  notices[rank_].addressBytes = mine;
  oob.allGather(notices.data(), sizeof(SetupNotice));
  size_t longest = 0;
  for (const SetupNotice& notice : notices)
    longest = std::max<size_t>(longest, notice.addressBytes);
  if (!failure.empty())
    fail(ncclSystemError, "ucx transport: rank %d cannot use UCX: %s", rank_,
         failure.c_str());
  for (int r = 0; r < oob.nranks(); ++r)
    if (notices[r].hasPeers && !notices[r].ready)
      fail(ncclSystemError,
           "ucx transport: rank %d cannot use UCX (its log says why)", r);

  // Every rank's slot holds its lanes' addresses, each as a 32-bit length
  // and `longest` bytes.
  const size_t entry = sizeof(uint32_t) + longest;
  const size_t slot = entry * agreedLanes;
  std::vector<uint8_t> table(slot * oob.nranks());
  for (size_t lane = 0; lane < addresses.size(); ++lane) {
    uint8_t* at = table.data() + slot * rank_ + entry * lane;
    const auto length = static_cast<uint32_t>(addresses[lane].size());
    std::memcpy(at, &length, sizeof length);
    std::copy(addresses[lane].begin(), addresses[lane].end(),
              at + sizeof length);
  }
  oob.allGather(table.data(), slot);
  if (lanes_.empty()) return;
  const auto linkSet = static_cast<uint8_t>(notices[0].linkSet);
  for (int lane = 0; lane < agreedLanes; ++lane) {
    std::map<int, std::vector<uint8_t>> peerAddresses;
    for (int peer : sortedPeers) {
      const uint8_t* at = table.data() + slot * peer + entry * lane;
      uint32_t length = 0;
      std::memcpy(&length, at, sizeof length);
      if (length > longest)
        fail(ncclInternalError, "ucx transport: rank %d sent a bad address",
             peer);
      peerAddresses[peer].assign(at + sizeof length,
                                 at + sizeof length + length);
    }
    lanes_[lane]->start(peerAddresses, linkSet);
  }
  const UcxLibrary& ucx = ucxLibrary();
  for (int peer : sortedPeers)
    links_[peer] = std::make_shared<UcxLink>(
        rank_, peer, linkSet, lanes_, notices[0].splitBytes,
        size_t{notices[0].partKiB} << 10,
        UcxGpuPolicy{settings.gpu, ucx.memoryKinds(), ucx.hasRdma()});
  LOG_INFO(kLogNet,
           "ucx transport (rank %d): %zu link(s) over UCX %s, %d lane(s), "
           "parts of %u to %u KiB (%s; memory %s)",
           rank_, links_.size(), ucx.version().c_str(), agreedLanes,
           notices[0].splitBytes >> 10, notices[0].partKiB,
           ucx.transports().c_str(),
           describeMemoryKinds(ucx.memoryKinds()).c_str());
}

UcxLinkSet::~UcxLinkSet() {
  for (auto& lane : lanes_) lane->stop();
}

std::shared_ptr<Link> UcxLinkSet::link(int peer) const {
  auto it = links_.find(peer);
  HETCCL_CHECK_ARG(it != links_.end(),
                   "ucx transport: rank %d has no link to rank %d", rank_,
                   peer);
  return it->second;
}

}  // namespace hetccl
