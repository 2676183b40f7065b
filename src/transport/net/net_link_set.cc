#include "transport/net/net_link_set.h"

#include <algorithm>
#include <cstring>
#include <random>

#include "transport/net/net_link.h"
#include "transport/peer_list.h"
#include "util/error.h"
#include "util/log.h"

namespace hetccl {
namespace {

// What every rank tells the others before connecting.
struct SetupNotice {
  uint32_t hasPeers;
  uint32_t linkSet;    // rank 0's is every rank's
  uint64_t partBytes;  // likewise
};

// Once ranks with peers have loaded the plugin and listen.
struct ListenNotice {
  uint32_t ready;
  uint32_t reserved;
  uint64_t maxMessage;  // the plugin's maxP2pBytes here
  NetListenHandle handle;
};

uint32_t randomLinkSetId() {
  std::random_device device;
  return device();
}

// Every rank learns whether each one succeeded; a rank that failed throws
// its own reason, the others name it.
void agreeOrFail(Oob& oob, const std::string& failure, const char* what) {
  std::vector<uint32_t> ok(oob.nranks());
  ok[oob.rank()] = failure.empty();
  oob.allGather(ok.data(), sizeof(uint32_t));
  if (!failure.empty())
    fail(ncclSystemError, "net transport: rank %d cannot %s: %s", oob.rank(),
         what, failure.c_str());
  for (int r = 0; r < oob.nranks(); ++r)
    if (!ok[r])
      fail(ncclSystemError,
           "net transport: rank %d cannot %s (its log says why)", r, what);
}

}  // namespace

NetLinkSet::NetLinkSet(Oob& oob, const std::vector<int>& peers,
                       std::shared_ptr<AbortSignal> abort, NetSettings settings,
                       double setupTimeoutSeconds,
                       std::shared_ptr<const CallLog> calls,
                       const NetLibrary* library)
    : rank_(oob.rank()) {
  HETCCL_CHECK_ARG(abort != nullptr, "net transport needs an abort signal");
  HETCCL_CHECK_ARG(settings.partBytes >= kMinNetPartBytes &&
                       settings.partBytes <= kMaxNetPartBytes,
                   "net transport: parts of %zu bytes, expected 4 KiB to 1 GiB",
                   settings.partBytes);
  const std::vector<int> sortedPeers =
      checkedLinkPeers("net", peers, rank_, oob.nranks());
  std::vector<SetupNotice> notices(oob.nranks());
  notices[rank_] = {!sortedPeers.empty(), randomLinkSetId(),
                    settings.partBytes};
  oob.allGather(notices.data(), sizeof(SetupNotice));
  bool anyPeers = false;
  for (const SetupNotice& notice : notices)
    anyPeers = anyPeers || notice.hasPeers;
  if (!anyPeers) return;  // the common case: nothing to load or agree on
  const uint32_t linkSet = notices[0].linkSet;

  std::vector<ListenNotice> listens(oob.nranks());
  const NetLibrary* net = nullptr;
  std::string failure;
  if (!sortedPeers.empty()) {
    try {
      net = library ? library : &netLibrary();
      thread_ = std::make_shared<NetProgressThread>(*net, linkSet, rank_, abort,
                                                    calls);
      listens[rank_].ready = 1;
      listens[rank_].maxMessage = net->devices().front().maxP2pBytes;
      listens[rank_].handle = thread_->handle();
    } catch (const Error& e) {
      failure = e.what();
      thread_.reset();
    }
  }
  oob.allGather(listens.data(), sizeof(ListenNotice));
  agreeOrFail(oob, failure, "use the net plugin");

  // Both ends of a link cut alike: rank 0's part size, within what every
  // rank's plugin takes as one message.
  size_t partBytes = notices[0].partBytes;
  for (int r = 0; r < oob.nranks(); ++r)
    if (listens[r].ready)
      partBytes = std::min<size_t>(partBytes, listens[r].maxMessage);
  if (thread_) {
    NetConnectPlan plan;
    plan.rank = rank_;
    plan.linkSet = linkSet;
    plan.timeoutSeconds = setupTimeoutSeconds;
    for (int peer : sortedPeers) plan.peers[peer] = listens[peer].handle;
    try {
      thread_->start(plan, std::max<size_t>(partBytes, 1));
    } catch (const Error& e) {
      failure = e.what();
    }
  }
  agreeOrFail(oob, failure, "connect to its peers");
  if (!thread_) return;
  for (int peer : sortedPeers)
    links_[peer] = std::make_shared<NetLink>(peer, thread_);
  LOG_INFO(kLogNet,
           "net transport (rank %d): %zu link(s) over %s, messages of up to "
           "%zu bytes",
           rank_, links_.size(), net->description().c_str(), partBytes);
}

NetLinkSet::~NetLinkSet() {
  if (thread_) thread_->stop();
}

std::shared_ptr<Link> NetLinkSet::link(int peer) const {
  auto it = links_.find(peer);
  HETCCL_CHECK_ARG(it != links_.end(),
                   "net transport: rank %d has no link to rank %d", rank_,
                   peer);
  return it->second;
}

}  // namespace hetccl
