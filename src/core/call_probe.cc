#include "core/call_probe.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "bootstrap/bootstrap.h"
#include "op/call_disagreement.h"
#include "util/log.h"

namespace hetccl {
namespace {

// The bootstrap tag of probes. The communicator's own exchanges count up
// from 1, its domains' take 0x4xxxxxxx and the pass-through check's
// 0x2xxxxxxx.
constexpr uint32_t kProbeTag = 0x10000001u;
// How often the probe looks: a peer's announcement waits at most this
// long for an answer.
constexpr auto kTick = std::chrono::milliseconds(20);
// How long a probe message may take to leave: a peer that cannot take it
// that soon is gone or stuck, which the waits report themselves.
constexpr double kSendSeconds = 0.2;

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

CallProbe::CallProbe(Bootstrap& bootstrap, std::shared_ptr<const CallLog> calls,
                     std::shared_ptr<const WaitingCall> waiting,
                     std::vector<int> linkPeers,
                     std::shared_ptr<AbortSignal> abort,
                     std::shared_ptr<const PeerLiveness> liveness,
                     StallReport stalls, std::unique_ptr<StatusFile> status,
                     std::shared_ptr<const WaitDescription> names)
    : bootstrap_(bootstrap),
      calls_(std::move(calls)),
      waiting_(std::move(waiting)),
      linkPeers_(std::move(linkPeers)),
      abort_(std::move(abort)),
      liveness_(std::move(liveness)),
      stalls_(std::move(stalls)),
      status_(std::move(status)),
      names_(std::move(names)),
      relay_(bootstrap.rank(), bootstrap.nranks()) {
  // The connections the questions take are made now, so that a stall in
  // a long run opens no descriptor.
  for (int peer : linkPeers_) send(peer, Message::kHello, nullptr, 0);
  abort_->setAnnouncer([this](ncclResult_t code, const std::string& reason) {
    announce(code, reason);
  });
  thread_ = std::thread([this] { run(); });
}

CallProbe::~CallProbe() {
  abort_->setAnnouncer(nullptr);  // waits for an announcement under way
  {
    std::lock_guard<std::mutex> lock(stopMutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void CallProbe::run() {
  std::unique_lock<std::mutex> lock(stopMutex_);
  while (!wake_.wait_for(lock, kTick, [this] { return stopping_; })) {
    lock.unlock();
    try {
      tick();
    } catch (const Error& e) {
      // The bootstrap failed or was aborted: the communicator's own waits
      // report that. The probe has nothing more to say.
      LOG_INFO(kLogColl, "rank %d: call probe stops: %s", bootstrap_.rank(),
               e.what());
      return;
    }
    lock.lock();
  }
}

// The abort signal is touched only here, outside handlingMutex_.
void CallProbe::tick() {
  RelayedWaits relayed;
  {
    std::lock_guard<std::mutex> lock(handlingMutex_);
    relayed = relay_.relayed();
  }
  stalls_.check(*waiting_, &relayed);
  if (status_) status_->refresh(*waiting_, &relayed);
  askIfStalled();
  Outcome outcome = readMessages();
  relayWaits();
  // Held before it is answered: once answered, the teller raises it and
  // may exit, and a transfer of this rank's that fails on that exit must
  // find the cause held, or it would report the lost connection instead.
  // While this rank announces a cause of its own, nothing is held (its
  // tellers wait for this answer, and its announcement for theirs).
  if (outcome.told && !held_ &&
      abort_->hold(outcome.told->code(), outcome.told->what(),
                   kSettleSeconds)) {
    held_ = outcome.told;
    heldSince_ = std::chrono::steady_clock::now();
    LOG_WARN(kLogColl, "rank %d: rank %d reports: %s", bootstrap_.rank(),
             outcome.tellers.front(), outcome.told->what());
  }
  for (int teller : outcome.tellers) send(teller, Message::kTaken, nullptr, 0);
  // Raised when every rank holds it, or when its teller went quiet.
  if (held_ && (outcome.settled || secondsSince(heldSince_) > kSettleSeconds))
    abort_->raiseHeld();
  // Found here: raised and so announced, unless this rank holds another
  // rank's cause already (raised above when that settles).
  if (outcome.found && !held_) {
    LOG_WARN(kLogColl, "rank %d: %s", bootstrap_.rank(), outcome.found->what());
    abort_->raise(outcome.found->code(), outcome.found->what());
  }
}

void CallProbe::askIfStalled() {
  std::optional<WaitingCall::Stall> stall = waiting_->stalledFor(kStallSeconds);
  // A send or receive has no call number to ask about: both ends' calls
  // travel in the transfer's header. A wait inside the domain is for a
  // rank whose calls the domain's back-end compares (the host
  // collectives' call board).
  if (!stall || stall->sequence == 0 ||
      stall->leg.kind == WaitLeg::Kind::kDomain || held_ || abort_->raised())
    return;
  if (asked_ && asked_->sequence == stall->sequence &&
      asked_->peer == stall->peer)
    return;
  asked_ = stall;
  std::optional<CallSignature> mine = calls_->find(stall->sequence);
  if (!mine) return;
  LOG_INFO(kLogColl,
           "rank %d: op #%llu has waited %g s for rank %d: asking whether "
           "its call is the same",
           bootstrap_.rank(), static_cast<unsigned long long>(stall->sequence),
           kStallSeconds, stall->peer);
  if (stall->peer >= 0) {
    sendCall(stall->peer, Message::kWaiting, *mine);
    return;
  }
  for (int peer : linkPeers_) sendCall(peer, Message::kWaiting, *mine);
}

void CallProbe::relayWaits() {
  if (held_ || abort_->raised() || !names_) return;
  const std::optional<WaitingCall::Stall> own =
      waiting_->stalledFor(kStallSeconds);
  std::vector<WaitRelay::Answer> answers;
  {
    std::lock_guard<std::mutex> lock(handlingMutex_);
    if (announcing_) return;
    answers = relay_.answers(own, calls_->latest(), *names_);
  }
  // Sent unlocked: a stopped asker may take kSendSeconds to refuse it.
  for (const WaitRelay::Answer& answer : answers)
    send(answer.first, Message::kWaitsFor, answer.second.data(),
         answer.second.size());
}

CallProbe::Outcome CallProbe::readMessages() {
  Outcome outcome;
  std::lock_guard<std::mutex> lock(handlingMutex_);
  while (auto message = bootstrap_.tryRecvAny(kProbeTag))
    handle(message->first, message->second, outcome);
  unanswered_.erase(std::remove_if(unanswered_.begin(), unanswered_.end(),
                                   [&](const Question& question) {
                                     return answer(question, outcome);
                                   }),
                    unanswered_.end());
  // A peer is never this far ahead while it waits for this rank.
  if (unanswered_.size() > CallLog::kKept)
    unanswered_.erase(unanswered_.begin(), unanswered_.end() - CallLog::kKept);
  return outcome;
}

void CallProbe::handle(int peer, const std::vector<uint8_t>& message,
                       Outcome& outcome) {
  if (message.empty()) return;
  switch (static_cast<Message>(message[0])) {
    case Message::kWaiting: {
      if (message.size() != 1 + kEncodedCallBytes) return;
      if (announcing_ || abort_->raised()) return;  // failing already
      const Question question{peer, decodeCall(message.data() + 1)};
      relay_.asked(peer, question.call.sequence);
      if (!answer(question, outcome)) unanswered_.push_back(question);
      return;
    }
    case Message::kWaitsFor:
      relay_.heard(peer,
                   std::vector<uint8_t>(message.begin() + 1, message.end()));
      return;
    case Message::kFailed: {
      if (message.size() < 2) return;
      const auto code = static_cast<ncclResult_t>(message[1]);
      if (!outcome.told && AbortSignal::announced(code))
        outcome.told.emplace(code,
                             std::string(message.begin() + 2, message.end()));
      outcome.tellers.push_back(peer);
      return;
    }
    case Message::kTaken:
      taken_.insert(peer);
      return;
    case Message::kSettled:
      outcome.settled = true;
      return;
    case Message::kHello:
      return;
  }
}

bool CallProbe::answer(const Question& question, Outcome& outcome) {
  if (!calls_->made(question.call.sequence)) return false;
  std::optional<CallSignature> mine = calls_->find(question.call.sequence);
  if (mine && !callsAgree(*mine, question.call) && !outcome.found)
    outcome.found = callDisagreement(bootstrap_.rank(), *mine, question.peer,
                                     question.call);
  return true;
}

// On the raising thread, with the abort signal's mutex held.
void CallProbe::announce(ncclResult_t code, const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(handlingMutex_);
    announcing_ = true;
  }
  std::string body(1, static_cast<char>(code));
  body += reason;
  std::vector<int> told;
  for (int r = 0; r < bootstrap_.nranks(); ++r)
    if (r != bootstrap_.rank() &&
        send(r, Message::kFailed, body.data(), body.size()))
      told.push_back(r);
  if (!awaitTaken(told))
    LOG_INFO(kLogColl,
             "rank %d: not every other rank took the news within %g s; the "
             "others are gone or stuck",
             bootstrap_.rank(), kAnnounceSeconds);
  for (int r : told) send(r, Message::kSettled, nullptr, 0);
}

bool CallProbe::awaitTaken(const std::vector<int>& told) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    Outcome outcome;  // this rank raises its own reason: others' only wait
    {
      std::lock_guard<std::mutex> lock(handlingMutex_);
      try {
        while (auto message = bootstrap_.tryRecvAny(kProbeTag))
          handle(message->first, message->second, outcome);
      } catch (const Error& e) {
        LOG_INFO(kLogColl, "rank %d: %s", bootstrap_.rank(), e.what());
        return false;
      }
      if (std::all_of(told.begin(), told.end(), [this](int r) {
            return taken_.count(r) != 0 || (liveness_ && liveness_->lost(r));
          }))
        return true;
    }
    // Another rank announcing at the same time waits for this one.
    for (int teller : outcome.tellers)
      send(teller, Message::kTaken, nullptr, 0);
    if (secondsSince(start) > kAnnounceSeconds) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void CallProbe::sendCall(int peer, Message kind, const CallSignature& call) {
  uint8_t body[kEncodedCallBytes];
  encodeCall(call, body);
  send(peer, kind, body, sizeof(body));
}

bool CallProbe::send(int peer, Message kind, const void* body, size_t bytes) {
  std::vector<uint8_t> message(1 + bytes);
  message[0] = static_cast<uint8_t>(kind);
  if (bytes > 0) std::memcpy(message.data() + 1, body, bytes);
  try {
    bootstrap_.sendWithin(peer, kProbeTag, message.data(), message.size(),
                          kSendSeconds);
    return true;
  } catch (const Error& e) {
    LOG_INFO(kLogColl, "rank %d: call probe message to rank %d not sent: %s",
             bootstrap_.rank(), peer, e.what());
    return false;
  }
}

}  // namespace hetccl
