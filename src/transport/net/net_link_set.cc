#include "transport/net/net_link_set.h"

#include <algorithm>
#include <cstring>
#include <random>

#include "transport/lane_placement.h"
#include "transport/net/net_link.h"
#include "transport/peer_list.h"
#include "util/cpu_cores.h"
#include "util/error.h"
#include "util/log.h"

namespace hetccl {
namespace {

// What every rank tells the others before connecting.
struct SetupNotice {
  uint32_t hasPeers;
  uint32_t linkSet;     // rank 0's is every rank's
  uint64_t partBytes;   // likewise
  uint64_t splitBytes;  // likewise
};

// Once ranks with peers have loaded the plugin and listen on their rails.
struct ListenNotice {
  uint32_t rails;          // 0: not ready
  int32_t pointerSupport;  // NCCL_PTR_* of every rail, ANDed
  uint64_t maxMessage;     // the least maxP2pBytes of its rails
  NetListenHandle handles[kMaxNetRails];
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

// "devices 0 (mlx5_0), 1 (mlx5_1)", for the log.
std::string describeRails(
    const NetLibrary& net,
    const std::vector<std::shared_ptr<NetProgressThread>>& rails) {
  std::string text;
  for (const auto& rail : rails)
    text += format("%s%d (%s)", text.empty() ? "" : ", ", rail->device(),
                   net.devices()[rail->device()].name);
  return format("device%s %s", rails.size() > 1 ? "s" : "", text.c_str());
}

// Why the current GPU exports no DMA-BUF; empty when it does.
std::string whyNoDmaBuf(const DeviceModule* gpuModule) {
  if (gpuModule == nullptr) return "a CPU rank";
  int supported = 0;
  const int code = gpuModule->api().dmaBufSupported(&supported);
  if (code != 0)
    return format("%s says %s", gpuModule->runtimeName(),
                  gpuModule->api().errorString(code));
  return supported ? "" : "its driver exports none";
}

// What each rail's progress thread needs to know of the link set.
struct RailSetup {
  uint32_t linkSet;
  int rank;
  std::shared_ptr<AbortSignal> abort;
  std::shared_ptr<const CallLog> calls;
};

// A rail (a progress thread listening on its device) for each device this
// rank uses (HETCCL_NET_DEVICES), and in `own` what the peers need of them.
std::vector<std::shared_ptr<NetProgressThread>> openRails(
    const NetLibrary& net, const std::string& devicesSetting, HostSlot slot,
    const RailSetup& setup, ListenNotice& own) {
  std::vector<std::string> names;
  for (const hetcclNetDeviceInfo& info : net.devices())
    names.emplace_back(info.name);
  std::vector<std::shared_ptr<NetProgressThread>> rails;
  own.pointerSupport = ~0;
  own.maxMessage = SIZE_MAX;
  for (int device : chooseNetDevices(devicesSetting, names, slot)) {
    const hetcclNetDeviceInfo& info = net.devices()[device];
    rails.push_back(std::make_shared<NetProgressThread>(
        net, setup.linkSet, setup.rank, device, setup.abort, setup.calls));
    own.handles[own.rails++] = rails.back()->handle();
    own.pointerSupport &= info.ptrSupport;
    own.maxMessage = std::min<uint64_t>(own.maxMessage, info.maxP2pBytes);
  }
  return rails;
}

struct ConnectSetup {
  uint32_t linkSet;
  int rank;
  double timeoutSeconds;
  size_t partBytes;
};

// Starts every rail's connections to the peers that share it (all at once:
// the peers connect their rails in the same order), and waits for them;
// on a failure stops them all and throws it.
void connectRails(const std::vector<std::shared_ptr<NetProgressThread>>& rails,
                  const std::map<int, size_t>& lanesWith,
                  const std::vector<ListenNotice>& listens,
                  const ConnectSetup& setup) {
  try {
    for (size_t k = 0; k < rails.size(); ++k) {
      NetConnectPlan plan;
      plan.rank = setup.rank;
      plan.linkSet = setup.linkSet;
      plan.timeoutSeconds = setup.timeoutSeconds;
      for (const auto& [peer, lanes] : lanesWith)
        if (k < lanes) plan.peers[peer] = listens[peer].handles[k];
      rails[k]->start(plan, setup.partBytes);
    }
    for (const auto& rail : rails) rail->awaitConnected();
  } catch (const Error&) {
    for (const auto& rail : rails) rail->stop();
    throw;
  }
}

// " (GPU buffers through DMA-BUF)", or why not, for the log line.
std::string gpuMemoryNote(const NetGpuPolicy& gpu, bool gpuRank,
                          const std::string& noDmaBuf) {
  std::string note;
  if (gpu.viaDmaBuf())
    note = " (GPU buffers through DMA-BUF)";
  else if (gpuRank && (gpu.pointerSupport & HETCCL_NET_MODULE_PTR_DMABUF))
    note = format(" (no DMA-BUF from this GPU: %s)", noDmaBuf.c_str());
  if (gpu.mode == GpuBuffers::kStaged)
    note += " (GPU buffers staged: HETCCL_NET_GPU=0)";
  return note;
}

}  // namespace

NetLinkSet::NetLinkSet(Oob& oob, const std::vector<int>& peers,
                       std::shared_ptr<AbortSignal> abort, NetSettings settings,
                       double setupTimeoutSeconds,
                       std::shared_ptr<const CallLog> calls,
                       const NetLibrary* library, HostSlot slot,
                       const DeviceModule* gpuModule)
    : rank_(oob.rank()) {
  HETCCL_CHECK_ARG(abort != nullptr, "net transport needs an abort signal");
  HETCCL_CHECK_ARG(settings.partBytes >= kMinNetPartBytes &&
                       settings.partBytes <= kMaxNetPartBytes,
                   "net transport: parts of %zu bytes, expected 4 KiB to 1 GiB",
                   settings.partBytes);
  const std::vector<int> sortedPeers =
      checkedLinkPeers("net", peers, rank_, oob.nranks());
  std::vector<SetupNotice> notices(oob.nranks());
  const size_t splitBytes =
      settings.splitBytes != 0
          ? settings.splitBytes
          : smallestPartForCores(availableCores(), kNetFewCoresSplitBytes);
  notices[rank_] = {!sortedPeers.empty(), randomLinkSetId(), settings.partBytes,
                    splitBytes};
  oob.allGather(notices.data(), sizeof(SetupNotice));
  bool anyPeers = false;
  for (const SetupNotice& notice : notices)
    anyPeers = anyPeers || notice.hasPeers;
  if (!anyPeers) return;  // the common case: nothing to load or agree on
  const uint32_t linkSet = notices[0].linkSet;
  if (notices[0].splitBytes < kMinSplitBytes)
    fail(ncclInternalError, "net transport: rank 0 sent %zu-byte shares",
         static_cast<size_t>(notices[0].splitBytes));

  std::vector<ListenNotice> listens(oob.nranks());
  const NetLibrary* net = nullptr;
  std::string failure;
  if (!sortedPeers.empty()) {
    try {
      net = library ? library : &netLibrary();
      rails_ = openRails(*net, settings.devices, slot,
                         {linkSet, rank_, abort, calls}, listens[rank_]);
    } catch (const Error& e) {
      failure = e.what();
      rails_.clear();
      listens[rank_] = ListenNotice{};
    }
  }
  oob.allGather(listens.data(), sizeof(ListenNotice));
  agreeOrFail(oob, failure, "use the net plugin");

  // Both ends of a link cut alike: rank 0's part size, within what every
  // device used takes as one message.
  size_t partBytes = notices[0].partBytes;
  for (int r = 0; r < oob.nranks(); ++r)
    if (listens[r].rails > 0)
      partBytes = std::min<size_t>(partBytes, listens[r].maxMessage);
  // Lane k of a link joins both ends' k-th rails.
  std::map<int, size_t> lanesWith;
  size_t railsUsed = 0;
  for (int peer : sortedPeers) {
    lanesWith[peer] = std::min<size_t>(rails_.size(), listens[peer].rails);
    railsUsed = std::max(railsUsed, lanesWith[peer]);
  }
  rails_.resize(railsUsed);  // those no peer shares are not started
  try {
    connectRails(
        rails_, lanesWith, listens,
        {linkSet, rank_, setupTimeoutSeconds, std::max<size_t>(partBytes, 1)});
  } catch (const Error& e) {
    failure = e.what();
  }
  agreeOrFail(oob, failure, "connect to its peers");
  if (rails_.empty()) return;
  const std::string noDmaBuf = whyNoDmaBuf(gpuModule);
  const NetGpuPolicy gpu{settings.gpu, listens[rank_].pointerSupport,
                         noDmaBuf.empty(), net->description()};
  for (int peer : sortedPeers) {
    std::vector<std::shared_ptr<NetProgressThread>> lanes(
        rails_.begin(), rails_.begin() + lanesWith[peer]);
    links_[peer] = std::make_shared<NetLink>(
        rank_, peer, std::move(lanes), notices[0].splitBytes, gpu, gpuModule);
  }
  LOG_INFO(kLogNet,
           "net transport (rank %d): %zu link(s) over %s, %s, shares of at "
           "least %zu bytes, messages of up to %zu bytes, memory the devices "
           "take: %s%s",
           rank_, links_.size(), net->description().c_str(),
           describeRails(*net, rails_).c_str(),
           static_cast<size_t>(notices[0].splitBytes), partBytes,
           describePointerSupport(gpu.pointerSupport).c_str(),
           gpuMemoryNote(gpu, gpuModule != nullptr, noDmaBuf).c_str());
}

NetLinkSet::~NetLinkSet() {
  for (const auto& rail : rails_) rail->stop();
}

std::shared_ptr<Link> NetLinkSet::link(int peer) const {
  auto it = links_.find(peer);
  HETCCL_CHECK_ARG(it != links_.end(),
                   "net transport: rank %d has no link to rank %d", rank_,
                   peer);
  return it->second;
}

}  // namespace hetccl
