// The transfers with one peer over a network plugin: this rank's send comm
// to it and its receive comm from it. On the send comm every transfer is a
// header (net_wire.h) and then its parts, messages of at most `partBytes`;
// the receive comm gets the peer's the same way. The receiver keeps the
// next header's receive posted whether or not a transfer of its own waits,
// so that a peer's transfer whose call disagrees with this rank's call of
// that number (call_log.h) is found even if no receive here will claim it.
// A receive's parts are posted once its header is in and agrees: calls
// that disagree and sizes that differ are reported before any data lands.
// Calls that disagree send the peer a notice (where its next header would
// come), raise the abort signal and break the channel.
//
// At most HETCCL_NET_MODULE_MAX_REQUESTS (the ABI's 32) requests are in flight
// on each comm; a post the plugin answers with no request is tried again on the
// next turn. Only the progress thread touches a channel.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "op/call_log.h"
#include "transport/net/net_connect.h"
#include "transport/net/net_wire.h"
#include "transport/posted_request.h"
#include "util/abort_signal.h"

namespace hetccl {

class NetChannel {
 public:
  // `latestCall` (Link::latestCallFrom) is raised for every header that
  // arrives; `calls` (may be null) are this rank's.
  NetChannel(const NetContext& context, int rank, int peer, NetPeerComms comms,
             size_t partBytes, std::shared_ptr<AbortSignal> abort,
             std::shared_ptr<const CallLog> calls,
             std::atomic<uint64_t>& latestCall);

  // Queue a transfer; fail it at once if the channel is broken.
  // `transferBytes`: the link's transfer that it is a share of. `memory`:
  // where the buffer is, for its registration; a receive into GPU memory
  // ends with the plugin's flush (iflush), so that its bytes are visible
  // to the GPU.
  void postSend(std::shared_ptr<PostedRequest> request, const void* data,
                size_t bytes, size_t transferBytes, NetMemory memory,
                const CallSignature& call);
  void postRecv(std::shared_ptr<PostedRequest> request, void* data,
                size_t bytes, size_t transferBytes, NetMemory memory,
                const CallSignature& call);

  // One turn: posts what the plugin takes, tests what is in flight.
  // Whether anything moved; throws the error that breaks the channel.
  bool progress();
  // Whether a transfer of this rank waits on the channel.
  bool busy() const { return !sends_.empty() || !receives_.empty(); }
  bool broken() const { return error_.has_value(); }
  // Fails every pending and later transfer with `error` and closes the
  // comms; logged where a transfer was pending.
  void breakWith(const Error& error);

 private:
  struct Transfer {
    std::shared_ptr<PostedRequest> request;
    char* data = nullptr;
    size_t bytes = 0;
    size_t transferBytes = 0;  // of the link's transfer it is a share of
    NetMemory memory;
    CallSignature call;
    size_t partBytes = 0;  // a receive's: the sender's, from its header
    uint64_t parts = 0;
    uint64_t partsPosted = 0;
    uint64_t partsDone = 0;
    bool headerPosted = false;  // a send's
    bool matched = false;       // a receive's: its header is in
    bool flushPosted = false;   // a receive's into GPU memory
    void* flush = nullptr;      // its flush request, until done
    NetRegistration registration;

    size_t partLength(uint64_t part) const {
      return part + 1 < parts ? partBytes : bytes - part * partBytes;
    }
  };
  // A request of the plugin in flight, and the transfer part it moves
  // (null: a header or notice).
  struct InFlight {
    void* request;
    Transfer* transfer;
    size_t expectedBytes;
    int slot;  // a header's or notice's send slot, else -1
  };

  bool progressSends();
  bool progressReceives();
  // Posts on the send comm; false when the plugin said "later".
  bool postHeader(Transfer& transfer);
  bool postPart(Transfer& transfer, bool sending);
  bool postHeaderReceive();
  // Tests every request in flight on one comm; whether any finished.
  bool testInFlight(std::deque<InFlight>& flight, bool sending);
  void onHeader();
  void match(Transfer& receive);
  void checkUnclaimed();
  [[noreturn]] void disagree(const CallSignature& sent,
                             const CallSignature& posted);
  void sendNotice(const NetDisagreementNotice& notice);
  void completeFront(std::deque<Transfer>& transfers);
  // Whether a receive whose parts are all in may complete: at once in host
  // memory, in GPU memory once the plugin's flush is done.
  bool flushed(Transfer& receive);
  void check(int result, const char* call) const;
  void ensureRegistered(Transfer& transfer, void* comm);

  const NetContext& context_;
  const NetLibrary& library_;
  const hetcclNetModuleTable& table_;
  const int rank_;
  const int peer_;
  const size_t partBytes_;
  const std::shared_ptr<AbortSignal> abort_;
  const std::shared_ptr<const CallLog> calls_;
  std::atomic<uint64_t>& latestCall_;
  NetPeerComms comms_;
  // Headers and notices leave from registered slots, one per request the
  // send comm may have in flight; a slot is free again once its request
  // finished.
  uint8_t sendSlots_[HETCCL_NET_MODULE_MAX_REQUESTS][kNetMessageBytes] = {};
  std::vector<int> freeSlots_;
  uint8_t headerIn_[kNetMessageBytes] = {};
  NetRegistration sendSlotsRegistration_;
  NetRegistration headerInRegistration_;
  std::deque<Transfer> sends_;
  std::deque<Transfer> receives_;
  std::deque<InFlight> sendFlight_;
  std::deque<InFlight> receiveFlight_;
  void* headerRequest_ = nullptr;  // the next header's receive, in flight
  std::optional<NetTransferHeader> unclaimed_;  // in, no receive matched yet
  bool awaitingCall_ = false;  // unclaimed_ is of a call not made here yet
  std::optional<Error> error_;
};

}  // namespace hetccl
