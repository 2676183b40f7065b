// What the links cannot see, in a communicator of several domains: calls
// that disagree without a byte moving, and a failure's cause at ranks that
// learn of it only from a messenger.
//
// Waits that face each other. Two ranks that each wait to receive from
// the other (a broadcast where each names the other as the root, a reduce
// likewise) send nothing, so no transfer's header ever carries a signature
// to compare (transport/link.h), and both would wait until HETCCL_TIMEOUT,
// forever by default. A thread per communicator looks every few tens of
// milliseconds at what the plans wait for (op/waiting_call.h). Once a
// wait for a peer in collective #k has lasted kStallSeconds, it sends that
// peer this rank's call #k over the bootstrap, once. The peer's thread
// compares it with its own call #k (op/call_log.h) as soon as it has
// made it: calls that agree mean the wait is mere slowness; calls that
// differ are a disagreement, found there. A probe costs one small message
// per collective that stalls that long, and nothing while none does.
//
// Ranks that see nothing, or only a messenger. Wherever a disagreement is
// found (a link's header, the host domain's call board, a probe) or a
// rank is lost (it exited or left mid-operation, a connection broke, a
// wait timed out), the finding rank's abort signal is raised with
// ncclInvalidUsage or ncclRemoteError. Before that takes effect, the probe
// tells every other rank the cause (kFailed) and waits, at most
// kAnnounceSeconds, until each has taken it (kTaken); then it tells them
// all to raise it (kSettled). A rank that took the cause holds it
// (AbortSignal::hold) until then, and raises nothing else meanwhile. So the
// ranks of the domains behind the two that met fail with the same
// message, and a rank that never talked to the one that left names that
// rank, not the survivor whose exit it saw first: by the time any rank's
// error shows (and it may exit), every rank holds the first cause.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/stall_report.h"
#include "core/status_file.h"
#include "core/wait_relay.h"
#include "op/call_log.h"
#include "op/waiting_call.h"
#include "util/abort_signal.h"
#include "util/error.h"
#include "util/peer_liveness.h"

namespace hetccl {

class Bootstrap;

class CallProbe {
 public:
  // How long a wait lasts before this rank asks its peer.
  static constexpr double kStallSeconds = 0.25;
  // How long a rank that found a disagreement waits for the others to
  // take it: past it, the missing ones are gone or stuck. Ranks that
  // cannot be reached or have exited are not waited for, and the others
  // answer within a tick, so the bound matters only on a machine too
  // loaded to run the probes' threads.
  static constexpr double kAnnounceSeconds = 1.0;
  // How long a rank holds an announced reason at most before it raises it
  // without the announcer's word.
  static constexpr double kSettleSeconds = 2 * kAnnounceSeconds;

  // `linkPeers`: the ranks whose transfers `waiting` can be waits for
  // (those of the other domains). `liveness`: which peers exited. Becomes
  // `abort`'s announcer. `bootstrap` outlives the probe. `stalls`: checked
  // at each look at the waits. `status`: refreshed then too (null without
  // HETCCL_STATUS_DIR). `names`: how this rank words its own wait for
  // the ranks that wait for it.
  CallProbe(Bootstrap& bootstrap, std::shared_ptr<const CallLog> calls,
            std::shared_ptr<const WaitingCall> waiting,
            std::vector<int> linkPeers, std::shared_ptr<AbortSignal> abort,
            std::shared_ptr<const PeerLiveness> liveness, StallReport stalls,
            std::unique_ptr<StatusFile> status,
            std::shared_ptr<const WaitDescription> names);
  ~CallProbe();
  CallProbe(const CallProbe&) = delete;
  CallProbe& operator=(const CallProbe&) = delete;

 private:
  enum class Message : uint8_t {
    kWaiting = 1,   // + a call: the sender waits for the receiver in it
    kFailed = 2,    // + a code and a reason: the sender's operation failed
    kTaken = 3,     // the sender took the receiver's kFailed (holds it next)
    kSettled = 4,   // every rank holds it: raise it
    kHello = 5,     // nothing: opens the bootstrap connection at init
    kWaitsFor = 6,  // + a relayed wait (WaitRelay::encode): the sender,
                    // which the receiver waits for, waits for these ranks
  };
  struct Question {
    int peer;
    CallSignature call;
  };
  // What reading the messages leaves to do once the lock is let go.
  struct Outcome {
    std::optional<Error> found;  // a disagreement this rank found
    std::optional<Error> told;   // a cause another rank announced
    std::vector<int> tellers;    // whom to answer kTaken
    bool settled = false;
  };

  void run();
  void tick();
  void askIfStalled();
  // Tells the ranks that asked this one whom it waits for, if that changed.
  void relayWaits();
  // Reads and handles what the peers sent, under handlingMutex_.
  Outcome readMessages();
  void handle(int peer, const std::vector<uint8_t>& message, Outcome& outcome);
  // Whether `question`'s call was made here; if so, compares.
  bool answer(const Question& question, Outcome& outcome);
  void announce(ncclResult_t code, const std::string& reason);
  // Whether each of `told` took the announcement in time (or exited).
  bool awaitTaken(const std::vector<int>& told);
  // Whether the message left.
  bool send(int peer, Message kind, const void* body, size_t bytes);
  void sendCall(int peer, Message kind, const CallSignature& call);

  Bootstrap& bootstrap_;
  const std::shared_ptr<const CallLog> calls_;
  const std::shared_ptr<const WaitingCall> waiting_;
  const std::vector<int> linkPeers_;
  const std::shared_ptr<AbortSignal> abort_;
  const std::shared_ptr<const PeerLiveness> liveness_;
  std::optional<WaitingCall::Stall> asked_;   // the probe thread's own
  StallReport stalls_;                        // the probe thread's own
  const std::unique_ptr<StatusFile> status_;  // the probe thread's own
  const std::shared_ptr<const WaitDescription> names_;

  // Messages are handled by the probe's thread, and by a thread that
  // announces (which holds the abort signal's mutex meanwhile: this one is
  // never held while raising).
  std::mutex handlingMutex_;
  std::vector<Question> unanswered_;  // about calls not made here yet
  WaitRelay relay_;
  bool announcing_ = false;
  std::set<int> taken_;  // the ranks that took this rank's kFailed
  // The probe thread's own: a cause held, since when.
  std::optional<Error> held_;
  std::chrono::steady_clock::time_point heldSince_;

  std::mutex stopMutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace hetccl
