// Tagged point-to-point messages among the ranks of one bootstrap, over
// direct TCP connections between ranks.
//
// Each rank listens on its own address; a rank connects to a peer the
// first time it sends to it, proves the communicator's secret in a hello
// (checked by an AuthenticatedAcceptor), and keeps the connection. Connections
// carry one direction only (the connecting rank sends), so two ranks never race
// to connect to each other. Frames are (tag, length, payload); a frame that
// arrives for a (peer, tag) nobody asked for yet is stashed until someone does.
//
// While a send waits for the socket to drain, incoming frames are read
// and stashed, so that ranks that all send before they receive (a ring)
// cannot deadlock however large the messages are.
//
// A rank that gives up an exchange (a peer died, a step failed, an abort)
// tells the exchange's other ranks, whose waits with that tag then fail at
// once: ranks that never talk to the dead one directly do not wait out the
// timeout.
//
// Thread safety: any number of threads may call send/recv concurrently
// (frames to one peer are serialised; messages of one (peer, tag) pair
// are delivered in order); abort() may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bootstrap/unique_id.h"
#include "util/authenticated_acceptor.h"
#include "util/listener.h"
#include "util/socket.h"
#include "util/socket_address.h"

namespace hetccl {

class PeerMesh {
 public:
  // `listener` is this rank's (its address is peers[rank]). Every wait
  // ends after `timeoutSeconds` (0: never) or when `abortFlag` is raised.
  PeerMesh(int rank, int nranks, const Secret& secret, Listener listener,
           std::vector<SocketAddress> peers, const std::atomic<bool>* abortFlag,
           double timeoutSeconds);
  ~PeerMesh();
  PeerMesh(const PeerMesh&) = delete;
  PeerMesh& operator=(const PeerMesh&) = delete;

  // Returns once the message is handed to the kernel (or, for
  // peer == rank, stashed for our own recv).
  void send(int peer, uint32_t tag, const void* data, size_t bytes);
  // The same, giving up (throwing) after `seconds`: for a message that
  // matters only soon.
  void sendWithin(int peer, uint32_t tag, const void* data, size_t bytes,
                  double seconds);
  // Waits for the next message of (peer, tag); it must be exactly `bytes`
  // long (ncclInternalError otherwise).
  void recv(int peer, uint32_t tag, void* data, size_t bytes);

  // A message with `tag` from any peer, if one is there: (peer, payload).
  // Never waits. It reads what the connections hold only while no other
  // call is in the mesh (one that is reads for it), so that it never
  // takes a frame from under a receive that sleeps in its poll.
  std::optional<std::pair<int, std::vector<uint8_t>>> tryRecvAny(uint32_t tag);

  // Tells `peers` (every other rank if empty) that this rank gave up the
  // exchange `tag` because of `why`: their sends and receives with that tag
  // fail at once with ncclRemoteError. Best effort within a short deadline,
  // also after abort(); never throws.
  void tellAbandoned(uint32_t tag, const std::vector<int>& peers,
                     const std::string& why);
  // Whether a peer said it gave up the exchange `tag`.
  bool abandonedByPeer(uint32_t tag) const;

  // Makes every blocked call throw within one poll slice.
  void abort() { aborted_.store(true, std::memory_order_release); }

  // (peer, fd) of each open connection. A peer that goes away shows as
  // POLLRDHUP/POLLHUP/POLLERR; poll them with events = POLLRDHUP only,
  // since the mesh itself reads the data.
  std::vector<std::pair<int, int>> connectionFds() const;
  // Incoming connections the mesh keeps: one per peer rank that connected,
  // and connections whose hello is not complete yet.
  size_t connectionsHeld() const;

 private:
  struct Incoming;
  struct Outgoing;

  void checkPeer(int peer, const char* call) const;
  void sendBefore(int peer, uint32_t tag, const void* data, size_t bytes,
                  const Deadline& deadline);
  // Writes one frame; the caller holds out.mutex.
  void writeFrame(Outgoing& out, int peer, uint32_t tag, const void* data,
                  size_t bytes, const Deadline& deadline,
                  const AbortFlags& abort);
  void connect(int peer, Outgoing& out, const Deadline& deadline,
               const AbortFlags& abort);
  void sendBytes(Outgoing& out, int peer, uint32_t tag, const void* data,
                 size_t bytes, const Deadline& deadline,
                 const AbortFlags& abort);
  void tellAbandoned(int peer, const std::vector<uint8_t>& notice,
                     const Deadline& deadline);
  void noteAbandonedLocked(const Incoming& in);
  void failIfAbandoned(uint32_t tag, const std::string& waitingFor) const;
  bool takeLocked(int peer, uint32_t tag, void* data, size_t bytes);
  // Polls the listener, the incoming connections and `extra` (if any) for
  // one slice, then reads whatever arrived. Returns extra's revents.
  short waitAndProgress(const pollfd* extra, const Deadline& deadline);
  // A hello with the secret (the acceptor checked it): a peer's connection
  // is kept, anything else refused.
  HelloVerdict onHelloLocked(const std::vector<uint8_t>& bytes, Socket& socket);
  void readLocked(Incoming& in);
  // Reads what is there of the current frame; false if nothing was.
  bool readFrameLocked(Incoming& in);
  bool readPayloadStep(Incoming& in);

  const int rank_;
  const int nranks_;
  const Secret secret_;
  const double timeoutSeconds_;
  const std::vector<SocketAddress> peers_;
  std::atomic<bool> aborted_{false};
  const AbortFlags abort_;
  std::atomic<int> activeCalls_{0};

  mutable std::mutex mutex_;  // guards everything below but outgoing_
  AuthenticatedAcceptor acceptor_;
  // By peer rank, null until it connected. Pointers to these are taken for
  // a poll outside the lock: they live as long as the mesh.
  std::vector<std::unique_ptr<Incoming>> incomingFrom_;
  std::map<std::pair<int, uint32_t>, std::deque<std::vector<uint8_t>>> stash_;
  // Exchanges a peer gave up: tag -> "rank X gave up ...: why".
  std::map<uint32_t, std::string> abandoned_;

  std::vector<std::unique_ptr<Outgoing>> outgoing_;  // by peer rank
};

}  // namespace hetccl
