// A kind of link between ranks of different domains (shm, tcp, ucx),
// as the transport registry knows it: what it can connect, which memory its
// links read and write themselves, how much it is preferred, and how to
// build its links for a communicator.
//
// Adding a transport: a folder under src/transport/ with its links and a
// `const Transport& fooTransport()`, and one line in transport_registry.cc;
// if it has parameters, its settings (foo_params.def, FooSettings) and
// their line in TransportSettings and in core/all_params.cc.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "op/call_log.h"
#include "runtime/device/device_module_loader.h"
#include "transport/host_slot.h"
#include "transport/link.h"
#include "transport/transport_settings.h"
#include "util/abort_signal.h"
#include "util/oob.h"
#include "util/peer_liveness.h"

namespace hetccl {

// The links one transport built for one communicator; it owns what they
// share (segments, sockets, progress threads). Thread safety: link() may be
// called from any thread once construction returned.
class LinkSet {
 public:
  virtual ~LinkSet() = default;
  // The link to `peer`; throws ncclInvalidArgument if it is not a peer.
  virtual std::shared_ptr<Link> link(int peer) const = 0;
  // Looks for what no thread of the transport would see while no transfer
  // waits: a peer's message whose call disagrees with this rank's call of
  // that number, or a peer's report that this rank's did (raising the
  // abort signal). The communicator's async-error query calls it, from any
  // thread.
  virtual void poll() {}
};

// What connect() gets. `settings` hold every transport's slice, of which
// each takes its own; `setupTimeoutSeconds` is how long connecting may
// wait for a peer (HETCCL_BOOTSTRAP_TIMEOUT; 0: no limit). `peers` are the
// ranks this rank needs links to through this transport (possibly none);
// the relation is symmetric. `calls` (may be null) are this rank's
// collective calls, which a peer's transfer that no receive waits for is
// compared with (call_log.h). `hostSlot`: this rank among its host's
// ranks. `gpuModule`: the device module of this rank's GPU (null for a CPU
// rank), for links that take GPU memory themselves; made with the GPU
// current.
struct TransportSetup {
  Oob& oob;
  const TransportSettings& settings;
  double setupTimeoutSeconds;
  std::vector<int> peers;
  std::shared_ptr<AbortSignal> abort;
  std::shared_ptr<const PeerLiveness> liveness;
  std::shared_ptr<const CallLog> calls = nullptr;
  HostSlot hostSlot = {};
  const DeviceModule* gpuModule = nullptr;
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual const char* name() const = 0;
  // One line for hetccl-info and error messages.
  virtual const char* description() const = 0;
  // Whether it can link ranks on different hosts (else only one host's).
  virtual bool reachesOtherHosts() const = 0;
  // Whether its links pass through shared host memory, so that GPU ranks
  // on one host may also meet in shared outboxes (the stream-driven path).
  virtual bool sharesHostMemory() const = 0;
  virtual unsigned memoryKinds() const = 0;
  // How much `auto` wants this transport between two ranks of one host
  // (sameHost) or of different hosts; 0: not at all. Between hosts the
  // answer may depend on the machine (and on loading a library to find
  // out), so each rank says its own and a pair takes the transport that
  // the less eager of the two wants most. On one host the answer must be
  // the same everywhere.
  virtual int preference(bool sameHost) const = 0;
  // What preference(false) is with the machine's full support (its library
  // and drivers present), so that only a transport that could have beaten
  // the one taken is named as missing.
  virtual int preferenceAtBest() const { return preference(false); }
  // Why preference(false) is lower here than this transport would have
  // with the machine's full support (its library or the RDMA drivers
  // missing), and what to install; empty when nothing is missing. Asked
  // only where preference(false) was, so that the user hears why `auto`
  // took a slower transport between hosts.
  virtual std::string missingBetweenHosts() const { return {}; }
  // What this rank's process has loaded for the transport (a plugin and
  // its devices), for the topology map; empty when nothing worth naming or
  // nothing was loaded (asking never loads anything).
  virtual std::string loadedHere() const { return {}; }
  // Collective over setup.oob: every rank calls it for every registered
  // transport, even with no peers, and a failure on one rank fails all.
  virtual std::unique_ptr<LinkSet> connect(
      const TransportSetup& setup) const = 0;
};

}  // namespace hetccl
