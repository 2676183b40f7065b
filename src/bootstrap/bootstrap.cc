#include "bootstrap/bootstrap.h"

#include <chrono>
#include <cstring>

#include "bootstrap/peer_mesh.h"
#include "bootstrap/protocol.h"
#include "bootstrap/root.h"
#include "bootstrap/unique_id.h"
#include "util/error.h"
#include "util/listener.h"
#include "util/log.h"
#include "util/net_interfaces.h"
#include "util/socket.h"
#include "util/socket_connect.h"
#include "util/wire.h"

namespace hetccl {
namespace {

// A rank waits this much longer than its own timeout for the root's
// answer: the root times out at about the same moment, and its answer
// names the ranks that never arrived.
constexpr double kRootGraceSeconds = 0.5;

struct RootTable {
  std::vector<SocketAddress> addresses;
  std::vector<uint8_t> peerInfo;
};

[[noreturn]] void failWithRootError(Socket& root, ncclResult_t status,
                                    const Deadline& deadline,
                                    const AbortFlags& abort) {
  uint8_t lengthBytes[4];
  root.recvAll(lengthBytes, sizeof(lengthBytes), deadline, abort,
               "the length of an error message");
  uint32_t length = WireReader(lengthBytes, sizeof(lengthBytes)).u32();
  std::string message(std::min(length, kMaxRootErrorBytes), '\0');
  root.recvAll(&message[0], message.size(), deadline, abort,
               "an error message");
  fail(status, "%s refused it: %s", root.peerName().c_str(), message.c_str());
}

// Whether a refused connection means that the root of `id` is gone rather
// than not up yet. An id from ncclGetUniqueId names a root that listened
// before the id existed; a fixed id's root (HETCCL_COMM_ID) is started by
// rank 0 at its init, so the other ranks wait for it, but rank 0 itself
// has just started it or found it running in this process.
bool rootListenedBefore(const UniqueIdContents& id, int rank) {
  return !id.fixedRoot || rank == 0;
}

// The root listens until its one communicator has formed (or it timed out
// or was cancelled), so a refusal from a root that listened before means
// that the id was used already, or by two communicators at once: said at
// once, not after the timeout.
Socket connectToRoot(const UniqueIdContents& id, int rank,
                     const Deadline& deadline, const AbortFlags& abort) {
  const bool listenedBefore = rootListenedBefore(id, rank);
  try {
    return connectTo(id.root, deadline, abort, "the bootstrap root",
                     listenedBefore ? ConnectMode::kListenerIsUp
                                    : ConnectMode::kWaitForListener);
  } catch (const Error& e) {
    // In kListenerIsUp mode only a refusal is an ncclRemoteError.
    if (listenedBefore && e.code() == ncclRemoteError)
      fail(ncclInvalidUsage,
           "the bootstrap root at %s no longer listens (connection refused): "
           "%s",
           id.root.toString().c_str(),
           id.fixedRoot
               ? "this process started it for HETCCL_COMM_ID/NCCL_COMM_ID, "
                 "and it served another communicator meanwhile: the address "
                 "serves one communicator at a time"
               : "a root serves exactly one communicator and stops once it "
                 "formed, so this ncclUniqueId was most likely used already, "
                 "or by two communicators at once; call ncclGetUniqueId for "
                 "each communicator (a root also stops at "
                 "HETCCL_BOOTSTRAP_TIMEOUT, when cancelled, or with the "
                 "process that made the id)");
    if (!id.fixedRoot || !deadline.expired()) throw;
    fail(e.code(),
         "%s (rank 0 starts the bootstrap root of HETCCL_COMM_ID/"
         "NCCL_COMM_ID when it calls init: did it, and is that address "
         "used by one communicator at a time?)",
         e.what());
  }
}

RootTable receiveTable(Socket& root, int nranks, size_t peerInfoBytes,
                       const Deadline& deadline, const AbortFlags& abort) {
  std::string what = format("the table of all %d rank(s)", nranks);
  uint8_t header[kRootReplyHeaderBytes];
  root.recvAll(header, sizeof(header), deadline, abort, what.c_str());
  ncclResult_t status = decodeRootReplyHeader(header);
  if (status != ncclSuccess) failWithRootError(root, status, deadline, abort);
  uint8_t tableHeader[kRootTableHeaderBytes];
  root.recvAll(tableHeader, sizeof(tableHeader), deadline, abort, what.c_str());
  WireReader r(tableHeader, sizeof(tableHeader));
  uint32_t count = r.u32();
  uint32_t bytes = r.u32();
  if (count != static_cast<uint32_t>(nranks) || bytes != peerInfoBytes)
    fail(ncclRemoteError,
         "%s sent a table of %u rank(s) with %u-byte peer infos; expected "
         "%d and %zu",
         root.peerName().c_str(), count, bytes, nranks, peerInfoBytes);
  size_t addressBytes = count * SocketAddress::kEncodedBytes;
  std::vector<uint8_t> body(addressBytes + static_cast<size_t>(count) * bytes);
  root.recvAll(body.data(), body.size(), deadline, abort, what.c_str());
  WireReader b(body.data(), body.size());
  RootTable table;
  for (uint32_t i = 0; i < count; ++i) table.addresses.push_back(b.address());
  table.peerInfo.assign(body.begin() + static_cast<long>(addressBytes),
                        body.end());
  return table;
}

}  // namespace

Bootstrap::Bootstrap(int rank, int nranks, size_t peerInfoBytes)
    : rank_(rank), nranks_(nranks), peerInfoBytes_(peerInfoBytes) {}

Bootstrap::~Bootstrap() = default;

std::unique_ptr<Bootstrap> Bootstrap::init(const ncclUniqueId& id, int rank,
                                           int nranks, const void* peerInfo,
                                           size_t peerInfoBytes,
                                           const std::atomic<bool>* abortFlag,
                                           double timeoutSeconds) {
  HETCCL_CHECK_ARG(nranks >= 1 && nranks <= kMaxRanks,
                   "bootstrap: nranks %d is not in 1..%d", nranks, kMaxRanks);
  HETCCL_CHECK_ARG(rank >= 0 && rank < nranks,
                   "bootstrap: rank %d is not a rank of 0..%d", rank,
                   nranks - 1);
  HETCCL_CHECK_ARG(peerInfo != nullptr || peerInfoBytes == 0,
                   "bootstrap: null peer info of %zu bytes", peerInfoBytes);
  HETCCL_CHECK_ARG(peerInfoBytes <= kMaxPeerInfoBytes,
                   "bootstrap: peer info of %zu bytes exceeds the limit of %u",
                   peerInfoBytes, kMaxPeerInfoBytes);
  UniqueIdContents contents = decodeUniqueId(id);
  auto start = std::chrono::steady_clock::now();
  Deadline deadline = Deadline::after(timeoutSeconds);
  Deadline replyDeadline = Deadline::after(
      timeoutSeconds > 0 ? timeoutSeconds + kRootGraceSeconds : 0);
  try {
    BootstrapSettings rootSettings;
    rootSettings.timeoutSeconds = timeoutSeconds;
    startRootIfNeeded(id, rank, rootSettings);
    Listener listener(chooseLocalAddress());
    LOG_INFO(kLogBootstrap,
             "rank %d of %d: joining through the bootstrap root at %s; "
             "listening for peers at %s",
             rank, nranks, contents.root.toString().c_str(),
             listener.address().toString().c_str());
    Socket root = connectToRoot(contents, rank, deadline, abortFlag);
    root.setPeerName("the bootstrap root at " + contents.root.toString());

    RootHello hello;
    hello.secret = contents.secret;
    hello.rank = rank;
    hello.nranks = nranks;
    hello.listenAddress = listener.address();
    hello.peerInfoBytes = static_cast<uint32_t>(peerInfoBytes);
    std::vector<uint8_t> bytes = encodeRootHello(hello);
    const auto* info = static_cast<const uint8_t*>(peerInfo);
    bytes.insert(bytes.end(), info, info + peerInfoBytes);
    root.sendAll(bytes.data(), bytes.size(), deadline, abortFlag, "the hello");
    RootTable table =
        receiveTable(root, nranks, peerInfoBytes, replyDeadline, abortFlag);
    root.close();

    std::unique_ptr<Bootstrap> bootstrap(
        new Bootstrap(rank, nranks, peerInfoBytes));
    bootstrap->peerInfo_ = std::move(table.peerInfo);
    bootstrap->addresses_ = table.addresses;
    bootstrap->mesh_ = std::make_unique<PeerMesh>(
        rank, nranks, contents.secret, std::move(listener),
        std::move(table.addresses), abortFlag, timeoutSeconds);
    std::chrono::duration<double, std::milli> took =
        std::chrono::steady_clock::now() - start;
    LOG_INFO(kLogBootstrap, "rank %d of %d: bootstrap complete in %.1f ms",
             rank, nranks, took.count());
    return bootstrap;
  } catch (const Error& e) {
    fail(e.code(), "bootstrap of rank %d of %d: %s", rank, nranks, e.what());
  }
}

const void* Bootstrap::peerInfo(int rank) const {
  HETCCL_CHECK_ARG(rank >= 0 && rank < nranks_,
                   "bootstrap: no peer info for rank %d of %d", rank, nranks_);
  return peerInfo_.data() + static_cast<size_t>(rank) * peerInfoBytes_;
}

const SocketAddress& Bootstrap::listenAddress(int rank) const {
  HETCCL_CHECK_ARG(rank >= 0 && rank < nranks_,
                   "bootstrap: no address for rank %d of %d", rank, nranks_);
  return addresses_[static_cast<size_t>(rank)];
}

void Bootstrap::send(int peer, uint32_t tag, const void* data, size_t bytes) {
  mesh_->send(peer, tag, data, bytes);
}

void Bootstrap::recv(int peer, uint32_t tag, void* data, size_t bytes) {
  mesh_->recv(peer, tag, data, bytes);
}

void Bootstrap::sendWithin(int peer, uint32_t tag, const void* data,
                           size_t bytes, double seconds) {
  mesh_->sendWithin(peer, tag, data, bytes, seconds);
}

std::optional<std::pair<int, std::vector<uint8_t>>> Bootstrap::tryRecvAny(
    uint32_t tag) {
  return mesh_->tryRecvAny(tag);
}

void Bootstrap::allGather(void* data, size_t bytesPerRank, uint32_t tag) {
  HETCCL_CHECK_ARG(data != nullptr || bytesPerRank == 0,
                   "bootstrap allGather: null buffer");
  auto* slots = static_cast<uint8_t*>(data);
  int next = (rank_ + 1) % nranks_;
  int prev = (rank_ + nranks_ - 1) % nranks_;
  runExchange(tag, {}, [&] {
    // Step s passes on the slot that arrived in step s-1 (our own first).
    for (int step = 0; step < nranks_ - 1; ++step) {
      int sendSlot = (rank_ - step + nranks_) % nranks_;
      int recvSlot = (rank_ - step - 1 + nranks_) % nranks_;
      mesh_->send(next, tag, slots + sendSlot * bytesPerRank, bytesPerRank);
      mesh_->recv(prev, tag, slots + recvSlot * bytesPerRank, bytesPerRank);
    }
  });
}

void Bootstrap::barrier(uint32_t tag) {
  // Dissemination: after round k every rank has heard, directly or not,
  // from the 2^(k+1) ranks before it. Each round talks to a different
  // peer, so per-(peer, tag) ordering keeps consecutive barriers apart.
  runExchange(tag, {}, [&] {
    uint8_t round = 0;
    for (int distance = 1; distance < nranks_; distance <<= 1, ++round) {
      mesh_->send((rank_ + distance) % nranks_, tag, &round, 1);
      uint8_t heard = 0;
      mesh_->recv((rank_ - distance + nranks_) % nranks_, tag, &heard, 1);
      if (heard != round)
        fail(ncclInternalError,
             "bootstrap barrier: rank %d got round %u from rank %d in round "
             "%u",
             rank_, heard, (rank_ - distance + nranks_) % nranks_, round);
    }
  });
}

void Bootstrap::broadcast(void* data, size_t bytes, int root, uint32_t tag) {
  HETCCL_CHECK_ARG(root >= 0 && root < nranks_,
                   "bootstrap broadcast: root %d is not a rank of 0..%d", root,
                   nranks_ - 1);
  // Binomial tree over ranks renumbered so that the root is 0.
  int self = (rank_ - root + nranks_) % nranks_;
  runExchange(tag, {}, [&] {
    int mask = 1;
    for (; mask < nranks_; mask <<= 1) {
      if (self & mask) {
        mesh_->recv((self - mask + root) % nranks_, tag, data, bytes);
        break;
      }
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
      if (self + mask < nranks_)
        mesh_->send((self + mask + root) % nranks_, tag, data, bytes);
  });
}

// A rank that failed because a peer gave the exchange up first stays
// quiet: that peer told everyone already.
void Bootstrap::tellAbandoned(uint32_t tag, const std::vector<int>& peers,
                              const char* why) {
  if (!mesh_->abandonedByPeer(tag)) mesh_->tellAbandoned(tag, peers, why);
}

void Bootstrap::abort() { mesh_->abort(); }

std::vector<std::pair<int, int>> Bootstrap::peerConnectionFds() const {
  return mesh_->connectionFds();
}

size_t Bootstrap::incomingConnectionsHeld() const {
  return mesh_->connectionsHeld();
}

}  // namespace hetccl
