#include "bootstrap/peer_mesh.h"

#include <poll.h>

#include <algorithm>
#include <cstring>

#include "bootstrap/protocol.h"
#include "util/error.h"
#include "util/log.h"
#include "util/socket_connect.h"
#include "util/wire.h"

namespace hetccl {
namespace {

// Frames up to this size go out in one write with their header.
constexpr size_t kCoalesceBytes = 64 * 1024;
// A bootstrap message beyond this is a corrupted stream, not data.
constexpr uint64_t kMaxFrameBytes = 1ull << 36;
// Poll slice while several threads share the mesh: a thread may be waiting
// for a frame that another thread read, which no socket event announces.
constexpr double kSharedSliceSeconds = 0.002;

// Counts the calls in progress, for the poll slice above.
class ActiveCall {
 public:
  explicit ActiveCall(std::atomic<int>* count) : count_(count) { ++*count_; }
  ~ActiveCall() { --*count_; }
  ActiveCall(const ActiveCall&) = delete;
  ActiveCall& operator=(const ActiveCall&) = delete;

 private:
  std::atomic<int>* count_;
};

std::vector<uint8_t> frameHeader(uint32_t tag, uint64_t bytes) {
  std::vector<uint8_t> header;
  WireWriter w(&header);
  w.u32(tag);
  w.u64(bytes);
  return header;
}

}  // namespace

struct PeerMesh::Incoming {
  Socket socket;
  int peer = -1;
  uint8_t header[kFrameHeaderBytes] = {};
  size_t headerFilled = 0;
  bool inPayload = false;
  uint32_t tag = 0;
  uint64_t payloadBytes = 0;     // what the header announced
  std::vector<uint8_t> payload;  // what has arrived of it
  bool closed = false;           // the peer closed it or it failed
  std::string closeReason;
};

struct PeerMesh::Outgoing {
  std::mutex mutex;  // held for a whole frame, so frames never interleave
  Socket socket;
  std::atomic<int> fd{-1};   // socket's fd, readable without the mutex
  std::string brokenReason;  // set when a frame was cut off
};

PeerMesh::PeerMesh(int rank, int nranks, const Secret& secret,
                   Listener listener, std::vector<SocketAddress> peers,
                   const std::atomic<bool>* abortFlag, double timeoutSeconds)
    : rank_(rank),
      nranks_(nranks),
      secret_(secret),
      timeoutSeconds_(timeoutSeconds),
      peers_(std::move(peers)),
      abort_(abortFlag, &aborted_),
      acceptor_(std::move(listener), secret, peerHelloFormat(),
                format("rank %d", rank), kLogBootstrap,
                [this](const std::vector<uint8_t>& bytes, Socket& socket) {
                  return onHelloLocked(bytes, socket);
                }),
      incomingFrom_(static_cast<size_t>(nranks)) {
  outgoing_.reserve(static_cast<size_t>(nranks));
  for (int i = 0; i < nranks; ++i)
    outgoing_.push_back(std::make_unique<Outgoing>());
}

PeerMesh::~PeerMesh() = default;

void PeerMesh::checkPeer(int peer, const char* call) const {
  if (peer < 0 || peer >= nranks_)
    fail(ncclInvalidArgument, "bootstrap %s: peer %d is not a rank of 0..%d",
         call, peer, nranks_ - 1);
}

// ---------------------------------------------------------------------------
// Sending

void PeerMesh::send(int peer, uint32_t tag, const void* data, size_t bytes) {
  sendBefore(peer, tag, data, bytes, Deadline::after(timeoutSeconds_));
}

void PeerMesh::sendWithin(int peer, uint32_t tag, const void* data,
                          size_t bytes, double seconds) {
  sendBefore(
      peer, tag, data, bytes,
      Deadline::after(seconds).earliest(Deadline::after(timeoutSeconds_)));
}

void PeerMesh::sendBefore(int peer, uint32_t tag, const void* data,
                          size_t bytes, const Deadline& deadline) {
  checkPeer(peer, "send");
  HETCCL_CHECK_ARG(data != nullptr || bytes == 0,
                   "bootstrap send: null data of %zu bytes", bytes);
  if (tag == kAbandonedExchangeTag)
    fail(ncclInternalError, "bootstrap send: tag %u is reserved", tag);
  const auto* p = static_cast<const uint8_t*>(data);
  if (peer == rank_) {
    std::lock_guard<std::mutex> lock(mutex_);
    stash_[{peer, tag}].emplace_back(p, p + bytes);
    return;
  }
  ActiveCall active(&activeCalls_);
  Outgoing& out = *outgoing_[static_cast<size_t>(peer)];
  std::lock_guard<std::mutex> sendLock(out.mutex);
  writeFrame(out, peer, tag, p, bytes, deadline, abort_);
  LOG_TRACE(kLogBootstrap, "rank %d: sent %zu bytes with tag %u to rank %d",
            rank_, bytes, tag, peer);
}

void PeerMesh::writeFrame(Outgoing& out, int peer, uint32_t tag,
                          const void* data, size_t bytes,
                          const Deadline& deadline, const AbortFlags& abort) {
  if (!out.brokenReason.empty())
    fail(ncclRemoteError,
         "rank %d cannot send to rank %d: the connection broke earlier (%s)",
         rank_, peer, out.brokenReason.c_str());
  if (!out.socket.valid()) connect(peer, out, deadline, abort);
  const auto* p = static_cast<const uint8_t*>(data);
  std::vector<uint8_t> header = frameHeader(tag, bytes);
  try {
    if (bytes <= kCoalesceBytes) {
      header.insert(header.end(), p, p + bytes);
      sendBytes(out, peer, tag, header.data(), header.size(), deadline, abort);
    } else {
      sendBytes(out, peer, tag, header.data(), header.size(), deadline, abort);
      sendBytes(out, peer, tag, p, bytes, deadline, abort);
    }
  } catch (const Error& e) {
    // Part of a frame may be on the wire: the stream cannot be resumed.
    out.brokenReason = e.what();
    throw;
  }
}

void PeerMesh::connect(int peer, Outgoing& out, const Deadline& deadline,
                       const AbortFlags& abort) {
  std::string name = format("rank %d", peer);
  const SocketAddress& address = peers_[static_cast<size_t>(peer)];
  // Every rank listened before it joined, so a refusal means it is gone.
  out.socket = connectTo(address, deadline, abort, name.c_str(),
                         ConnectMode::kListenerIsUp);
  out.socket.setPeerName(name + " at " + address.toString());
  PeerHello hello;
  hello.secret = secret_;
  hello.from = rank_;
  hello.to = peer;
  hello.nranks = nranks_;
  std::vector<uint8_t> bytes = encodePeerHello(hello);
  try {
    out.socket.sendAll(bytes.data(), bytes.size(), deadline, abort,
                       "a peer hello");
  } catch (const Error&) {
    out.socket.close();
    throw;
  }
  out.fd.store(out.socket.fd(), std::memory_order_release);
  LOG_INFO(kLogBootstrap, "rank %d: connected to rank %d at %s", rank_, peer,
           address.toString().c_str());
}

void PeerMesh::sendBytes(Outgoing& out, int peer, uint32_t tag,
                         const void* data, size_t bytes,
                         const Deadline& deadline, const AbortFlags& abort) {
  const auto* p = static_cast<const uint8_t*>(data);
  size_t done = 0;
  while (done < bytes) {
    size_t n = out.socket.sendSome(p + done, bytes - done, "a message");
    done += n;
    if (done == bytes || n > 0) continue;
    const std::string waitingFor = format(
        "rank %d to accept a message with tag %u from rank %d (%zu "
        "of %zu bytes sent)",
        peer, tag, rank_, done, bytes);
    failIfAbandoned(tag, waitingFor);
    if (abort.raised() || deadline.expired())
      checkWait(deadline, abort, waitingFor);
    pollfd writable{out.socket.fd(), POLLOUT, 0};
    waitAndProgress(&writable, deadline);
  }
}

// ---------------------------------------------------------------------------
// Giving up an exchange

void PeerMesh::tellAbandoned(uint32_t tag, const std::vector<int>& peers,
                             const std::string& why) {
  // Short: the caller is on its way to report an error.
  constexpr double kNoticeSeconds = 2.0;
  std::vector<uint8_t> notice;
  WireWriter w(&notice);
  w.u32(tag);
  w.bytes(why.data(), std::min(why.size(), kMaxAbandonReasonBytes));
  const Deadline deadline = Deadline::after(kNoticeSeconds);
  std::vector<int> everyone;
  for (int r = 0; r < nranks_ && peers.empty(); ++r) everyone.push_back(r);
  for (int peer : peers.empty() ? everyone : peers)
    if (peer != rank_) tellAbandoned(peer, notice, deadline);
  LOG_INFO(kLogBootstrap, "rank %d: told %s that it gave up exchange %u: %s",
           rank_, peers.empty() ? "every rank" : "the exchange's ranks", tag,
           why.c_str());
}

void PeerMesh::tellAbandoned(int peer, const std::vector<uint8_t>& notice,
                             const Deadline& deadline) {
  ActiveCall active(&activeCalls_);
  Outgoing& out = *outgoing_[static_cast<size_t>(peer)];
  // A frame in progress (another thread's send) cannot be interrupted.
  std::unique_lock<std::mutex> lock(out.mutex, std::try_to_lock);
  if (!lock.owns_lock()) return;
  try {
    // The abort flags are left out: an aborted rank tells the others too.
    writeFrame(out, peer, kAbandonedExchangeTag, notice.data(), notice.size(),
               deadline, AbortFlags());
  } catch (const Error& e) {
    LOG_INFO(kLogBootstrap, "rank %d: could not tell rank %d: %s", rank_, peer,
             e.what());
  }
}

void PeerMesh::noteAbandonedLocked(const Incoming& in) {
  if (in.payload.size() < 4) return;  // not a notice HetCCL sends
  WireReader r(in.payload.data(), in.payload.size());
  const uint32_t tag = r.u32();
  const size_t reasonBytes = std::min(r.left(), kMaxAbandonReasonBytes);
  std::string reason(reinterpret_cast<const char*>(r.position()), reasonBytes);
  LOG_INFO(kLogBootstrap, "rank %d: rank %d gave up exchange %u: %s", rank_,
           in.peer, tag, reason.c_str());
  abandoned_.emplace(tag, format("rank %d gave up that exchange: %s", in.peer,
                                 reason.c_str()));
}

bool PeerMesh::abandonedByPeer(uint32_t tag) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return abandoned_.count(tag) != 0;
}

void PeerMesh::failIfAbandoned(uint32_t tag,
                               const std::string& waitingFor) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto gaveUp = abandoned_.find(tag);
  if (gaveUp != abandoned_.end())
    fail(ncclRemoteError, "rank %d was waiting for %s, but %s", rank_,
         waitingFor.c_str(), gaveUp->second.c_str());
}

// ---------------------------------------------------------------------------
// Receiving

void PeerMesh::recv(int peer, uint32_t tag, void* data, size_t bytes) {
  checkPeer(peer, "recv");
  HETCCL_CHECK_ARG(data != nullptr || bytes == 0,
                   "bootstrap recv: null buffer of %zu bytes", bytes);
  ActiveCall active(&activeCalls_);
  Deadline deadline = Deadline::after(timeoutSeconds_);
  const std::string waitingFor = format(
      "a message with tag %u from rank %d at %s (rank %d, %zu bytes)", tag,
      peer, peers_[static_cast<size_t>(peer)].toString().c_str(), rank_, bytes);
  while (true) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (takeLocked(peer, tag, data, bytes)) return;
      const Incoming* in = incomingFrom_[static_cast<size_t>(peer)].get();
      if (in != nullptr && in->closed)
        fail(ncclRemoteError,
             "rank %d was waiting for a message with tag %u from rank %d, "
             "but rank %d is gone: %s",
             rank_, tag, peer, peer, in->closeReason.c_str());
    }
    failIfAbandoned(tag, waitingFor);
    if (abort_.raised() || deadline.expired())
      checkWait(deadline, abort_, waitingFor);
    waitAndProgress(nullptr, deadline);
  }
}

std::optional<std::pair<int, std::vector<uint8_t>>> PeerMesh::tryRecvAny(
    uint32_t tag) {
  int idle = 0;
  if (activeCalls_.compare_exchange_strong(idle, 1)) {
    // The mesh's only call now, until `leave` goes: a slice that ends at
    // once reads only what has arrived.
    struct Leave {
      std::atomic<int>& calls;
      ~Leave() { --calls; }
    } leave{activeCalls_};
    constexpr double kNoWaitSeconds = 1e-9;
    waitAndProgress(nullptr, Deadline::after(kNoWaitSeconds));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = stash_.begin(); it != stash_.end(); ++it) {
    if (it->first.second != tag) continue;
    std::pair<int, std::vector<uint8_t>> message{it->first.first,
                                                 std::move(it->second.front())};
    it->second.pop_front();
    if (it->second.empty()) stash_.erase(it);
    return message;
  }
  return std::nullopt;
}

bool PeerMesh::takeLocked(int peer, uint32_t tag, void* data, size_t bytes) {
  auto it = stash_.find({peer, tag});
  if (it == stash_.end()) return false;
  std::vector<uint8_t> message = std::move(it->second.front());
  it->second.pop_front();
  if (it->second.empty()) stash_.erase(it);
  if (message.size() != bytes)
    fail(ncclInternalError,
         "rank %d expected %zu bytes with tag %u from rank %d, but the "
         "message holds %zu (ranks disagree about the exchange)",
         rank_, bytes, tag, peer, message.size());
  if (bytes > 0) std::memcpy(data, message.data(), bytes);
  return true;
}

short PeerMesh::waitAndProgress(const pollfd* extra, const Deadline& deadline) {
  std::vector<pollfd> fds;
  std::vector<Incoming*> owners;
  if (extra != nullptr) {
    fds.push_back(*extra);
    owners.push_back(nullptr);
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& in : incomingFrom_) {
      if (in == nullptr || in->closed) continue;
      fds.push_back({in->socket.fd(), POLLIN, 0});
      owners.push_back(in.get());
    }
    acceptor_.appendPollFds(&fds);  // after the owners' entries
  }
  Deadline slice = activeCalls_.load() > 1
                       ? deadline.earliest(Deadline::after(kSharedSliceSeconds))
                       : deadline;
  pollSlice(fds, slice);
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t i = 0; i < owners.size(); ++i)
    if (owners[i] != nullptr && fds[i].revents != 0) readLocked(*owners[i]);
  acceptor_.progress(fds);
  return extra != nullptr ? fds[0].revents : 0;
}

HelloVerdict PeerMesh::onHelloLocked(const std::vector<uint8_t>& bytes,
                                     Socket& socket) {
  PeerHello hello = decodePeerHello(bytes.data());
  if (hello.to != rank_ || hello.nranks != nranks_ || hello.from < 0 ||
      hello.from >= nranks_ || hello.from == rank_)
    return HelloVerdict::refuse(
        ncclInvalidUsage,
        format("hello from rank %d of %d meant for rank %d; "
               "this is rank %d of %d",
               hello.from, hello.nranks, hello.to, rank_, nranks_));
  auto& slot = incomingFrom_[static_cast<size_t>(hello.from)];
  if (slot != nullptr)
    return HelloVerdict::refuse(
        ncclInvalidUsage, format("rank %d is already connected", hello.from));
  slot = std::make_unique<Incoming>();
  slot->peer = hello.from;
  slot->socket = std::move(socket);
  const std::string from = slot->socket.peerAddress().toString();
  slot->socket.setPeerName(format("rank %d at %s", hello.from, from.c_str()));
  LOG_INFO(kLogBootstrap, "rank %d: accepted connection from rank %d at %s",
           rank_, hello.from, from.c_str());
  // Ranks send right after their hello: read what came with it.
  readLocked(*slot);
  return HelloVerdict::taken();
}

void PeerMesh::readLocked(Incoming& in) {
  try {
    while (readFrameLocked(in)) continue;  // a frame's worth each pass
  } catch (const Error& e) {
    in.closed = true;
    in.closeReason = e.what();
    if (in.inPayload || in.headerFilled > 0)
      LOG_WARN(kLogBootstrap,
               "rank %d: connection from rank %d ended in the "
               "middle of a message: %s",
               rank_, in.peer, e.what());
    else
      LOG_INFO(kLogBootstrap, "rank %d: rank %d closed its connection", rank_,
               in.peer);
  }
}

bool PeerMesh::readFrameLocked(Incoming& in) {
  if (!in.inPayload) {
    size_t n = in.socket.recvSome(in.header + in.headerFilled,
                                  kFrameHeaderBytes - in.headerFilled,
                                  "a message header");
    if (n == 0) return false;
    in.headerFilled += n;
    if (in.headerFilled < kFrameHeaderBytes) return true;
    WireReader r(in.header, kFrameHeaderBytes);
    in.tag = r.u32();
    uint64_t bytes = r.u64();
    if (bytes > kMaxFrameBytes)
      fail(ncclInternalError,
           "rank %d sent a message header claiming %llu bytes: the stream "
           "is corrupted",
           in.peer, static_cast<unsigned long long>(bytes));
    in.headerFilled = 0;
    in.payloadBytes = bytes;
    in.payload.clear();
    in.inPayload = true;
  }
  if (in.payload.size() < in.payloadBytes && !readPayloadStep(in)) return false;
  if (in.payload.size() == in.payloadBytes) {
    if (in.tag == kAbandonedExchangeTag)
      noteAbandonedLocked(in);
    else
      stash_[{in.peer, in.tag}].push_back(std::move(in.payload));
    in.payload = std::vector<uint8_t>();
    in.inPayload = false;
  }
  return true;
}

// The buffer grows with the bytes that arrive (doubling its capacity), not
// with what the header claims: a header that lies costs only what is sent.
bool PeerMesh::readPayloadStep(Incoming& in) {
  constexpr size_t kStepBytes = 1 << 20;
  const size_t have = in.payload.size();
  const size_t step = static_cast<size_t>(
      std::min<uint64_t>(in.payloadBytes - have, kStepBytes));
  if (in.payload.capacity() < have + step)
    in.payload.reserve(std::max(2 * in.payload.capacity(), have + step));
  in.payload.resize(have + step);
  const size_t n =
      in.socket.recvSome(in.payload.data() + have, step, "a message");
  in.payload.resize(have + n);
  return n > 0;
}

size_t PeerMesh::connectionsHeld() const {
  std::lock_guard<std::mutex> lock(mutex_);
  const size_t peers = static_cast<size_t>(std::count_if(
      incomingFrom_.begin(), incomingFrom_.end(),
      [](const std::unique_ptr<Incoming>& in) { return in != nullptr; }));
  return peers + acceptor_.pendingCount();
}

std::vector<std::pair<int, int>> PeerMesh::connectionFds() const {
  std::vector<std::pair<int, int>> out;
  for (int peer = 0; peer < nranks_; ++peer) {
    int fd = outgoing_[static_cast<size_t>(peer)]->fd.load(
        std::memory_order_acquire);
    if (fd >= 0) out.emplace_back(peer, fd);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& in : incomingFrom_)
    if (in != nullptr && !in->closed)
      out.emplace_back(in->peer, in->socket.fd());
  return out;
}

}  // namespace hetccl
