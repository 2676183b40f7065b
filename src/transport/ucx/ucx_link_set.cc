#include "transport/ucx/ucx_link_set.h"

#include <algorithm>
#include <cstring>
#include <random>

#include "transport/peer_list.h"
#include "transport/ucx/ucx_link.h"
#include "util/error.h"
#include "util/log.h"

namespace hetccl {
namespace {

// What every rank tells the others before addresses are exchanged.
struct SetupNotice {
  uint32_t hasPeers;
  uint32_t ready;  // UCX loaded and a worker created
  uint32_t addressBytes;
  uint32_t linkSet;  // rank 0's choice is every rank's
};

uint8_t randomLinkSetId() {
  std::random_device device;
  return static_cast<uint8_t>(device());
}

}  // namespace

UcxLinkSet::UcxLinkSet(Oob& oob, const std::vector<int>& peers,
                       std::shared_ptr<AbortSignal> abort)
    : rank_(oob.rank()) {
  HETCCL_CHECK_ARG(abort != nullptr, "ucx transport needs an abort signal");
  HETCCL_CHECK_ARG(oob.nranks() - 1 <= kMaxUcxRank,
                   "ucx transport: %d ranks, at most %d supported",
                   oob.nranks(), kMaxUcxRank + 1);
  const std::vector<int> sortedPeers =
      checkedLinkPeers("ucx", peers, rank_, oob.nranks());
  std::vector<uint8_t> address;
  std::string failure;
  if (!sortedPeers.empty()) {
    try {
      engine_ = std::make_shared<UcxEngine>(ucxLibrary(), rank_, abort);
      address = engine_->address();
    } catch (const Error& e) {
      failure = e.what();
      engine_.reset();
    }
  }
  std::vector<SetupNotice> notices(oob.nranks());
  notices[rank_] = {!sortedPeers.empty(), engine_ != nullptr,
                    static_cast<uint32_t>(address.size()), randomLinkSetId()};
  oob.allGather(notices.data(), sizeof(SetupNotice));
  bool anyPeers = false;
  uint32_t longest = 0;
  for (int r = 0; r < oob.nranks(); ++r) {
    anyPeers = anyPeers || notices[r].hasPeers;
    longest = std::max(longest, notices[r].addressBytes);
  }
  if (!anyPeers) return;
  if (!failure.empty())
    fail(ncclSystemError, "ucx transport: rank %d cannot use UCX: %s", rank_,
         failure.c_str());
  for (int r = 0; r < oob.nranks(); ++r)
    if (notices[r].hasPeers && !notices[r].ready)
      fail(ncclSystemError,
           "ucx transport: rank %d cannot use UCX (its log says why)", r);

  std::vector<uint8_t> table(size_t{longest} * oob.nranks());
  std::copy(address.begin(), address.end(), table.begin() + longest * rank_);
  oob.allGather(table.data(), longest);
  std::map<int, std::vector<uint8_t>> peerAddresses;
  for (int peer : sortedPeers) {
    const uint8_t* slot = table.data() + size_t{longest} * peer;
    peerAddresses[peer].assign(slot, slot + notices[peer].addressBytes);
  }
  if (!engine_) return;
  engine_->start(peerAddresses);
  const auto linkSet = static_cast<uint8_t>(notices[0].linkSet);
  for (int peer : sortedPeers)
    links_[peer] = std::make_shared<UcxLink>(rank_, peer, linkSet, engine_);
  const UcxLibrary& ucx = ucxLibrary();
  LOG_INFO(kLogNet,
           "ucx transport (rank %d): %zu link(s) over UCX %s (%s; memory %s)",
           rank_, links_.size(), ucx.version().c_str(),
           ucx.transports().c_str(),
           describeMemoryKinds(ucx.memoryKinds()).c_str());
}

UcxLinkSet::~UcxLinkSet() {
  if (engine_) engine_->stop();
}

std::shared_ptr<Link> UcxLinkSet::link(int peer) const {
  auto it = links_.find(peer);
  HETCCL_CHECK_ARG(it != links_.end(),
                   "ucx transport: rank %d has no link to rank %d", rank_,
                   peer);
  return it->second;
}

}  // namespace hetccl
