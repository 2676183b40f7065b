// The bootstrap root: the one place every rank of a new communicator
// connects to. It collects a hello from each rank (its rank, the rank
// count, where it listens for peers, and its peer info), and when all have
// arrived it sends every rank the table of all addresses and peer infos.
//
// It serves exactly one communicator and then exits. Connections are
// handled concurrently (AuthenticatedAcceptor), so a stranger that sends
// garbage or nothing cannot hold real ranks up; such connections are
// logged (throttled) and dropped.
// What the root holds grows with the ranks that arrived, never with the
// rank count a hello claims.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bootstrap/bootstrap_settings.h"
#include "bootstrap/protocol.h"
#include "bootstrap/unique_id.h"
#include "util/authenticated_acceptor.h"
#include "util/error.h"
#include "util/listener.h"
#include "util/socket.h"
#include "util/socket_address.h"

namespace hetccl {

class RootService {
 public:
  // `onStopListening` runs once, when the listener closes (before the
  // table goes out, or when the service ends for any reason), so that the
  // address can be claimed by the next root.
  // Waits for ranks for `settings.timeoutSeconds` (0: forever), and says
  // who arrived and who has not once it has waited
  // `settings.stallWarnSeconds`, then again each time it has waited twice
  // as long.
  RootService(Listener listener, const Secret& secret,
              const BootstrapSettings& settings,
              std::function<void()> onStopListening = {});
  ~RootService();
  RootService(const RootService&) = delete;
  RootService& operator=(const RootService&) = delete;

  // Serves until every rank arrived, `timeoutSeconds` passed (the ranks
  // that did arrive are told which never did) or a cancel request came.
  void run();

  const SocketAddress& address() const { return address_; }

 private:
  // A rank that joined and waits for the table.
  struct Arrival {
    Socket socket;
    SocketAddress listenAddress;
    std::vector<uint8_t> peerInfo;
  };

  void pollOnce(const Deadline& deadline);
  // The acceptor's hello steps: the prefix (after its secret), the fixed
  // part, then the peer info.
  HelloVerdict onHello(const std::vector<uint8_t>& hello, Socket& socket);
  HelloVerdict onPrefix(const std::vector<uint8_t>& hello, Socket& socket);
  HelloVerdict onHelloHeader(const std::vector<uint8_t>& hello, Socket& socket);
  HelloVerdict onJoin(const std::vector<uint8_t>& hello, Socket& socket);
  // Gives the rank its seat, unless another holds it.
  HelloVerdict seat(const RootHello& hello, const std::vector<uint8_t>& bytes,
                    Socket& socket);
  HelloVerdict onCancel(Socket& socket);
  // Tells a refused connection why, and keeps the reason for the timeout.
  void answer(Socket& socket, const Error& refusal);
  void watchArrival(int rank);
  // Why a join's rank, rank count or address cannot be right, or "".
  static std::string badJoin(const RootHello& hello);
  // The communicator cannot form (a rank of another HetCCL build holds its
  // secret): the ranks that arrived are told now, later ones as they come.
  void failCommunicator(ncclResult_t code, const std::string& message);
  void sendTables();
  void failArrived(ncclResult_t code, const std::string& message);
  // Sends every rank that arrived the error reply; one that cannot take it
  // fails on its own timeout.
  void tellArrived(ncclResult_t code, const std::string& message);
  std::string missingRanks() const;
  // The warning of a wait that has lasted `waited` seconds, when due.
  void reportWait(double waited);
  // "2 of 4 rank(s) arrived (rank 0 at ..., rank 1 at ...); not yet: ..."
  std::string arrivalsText() const;
  // "; refused meanwhile: ..." for the timeout message, or "".
  std::string refusalsText() const;
  void stopListening();

  SocketAddress address_;
  double timeoutSeconds_;
  double stallWarnSeconds_;
  double nextReportSeconds_;
  std::function<void()> onStopListening_;
  std::string name_;
  AuthenticatedAcceptor acceptor_;
  // Why connections that spoke the bootstrap protocol were refused (a rank
  // of another HetCCL build, of another communicator): the ranks that
  // waited for them are told at the timeout. The first few distinct ones.
  std::vector<std::string> refusals_;
  std::optional<Error> fatal_;       // set by failCommunicator
  std::map<int, Arrival> arrivals_;  // by rank: only those that arrived
  int nranks_ = 0;                   // 0 until the first join fixes it
  int firstRank_ = -1;
  uint32_t peerInfoBytes_ = 0;
  bool cancelled_ = false;
};

}  // namespace hetccl
