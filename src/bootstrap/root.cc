#include "bootstrap/root.h"

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <system_error>
#include <thread>

#include "bootstrap/bootstrap_settings.h"
#include "bootstrap/protocol.h"
#include "bootstrap/root_service.h"
#include "bootstrap/unique_id.h"
#include "util/error.h"
#include "util/listener.h"
#include "util/log.h"
#include "util/net_interfaces.h"
#include "util/socket.h"
#include "util/socket_connect.h"

namespace hetccl {
namespace {

// The fixed addresses this process serves a root on right now. Process
// wide by nature: it keeps a second startRootIfNeeded for the same id
// (say, from two layers of init) from fighting over the port.
class FixedRoots {
 public:
  static FixedRoots& instance() {
    static FixedRoots* roots = new FixedRoots;  // never destroyed: detached
    return *roots;                              // root threads may outlive
  }                                             // static destruction
  bool claim(const std::string& address) {
    std::lock_guard<std::mutex> lock(mutex_);
    return addresses_.insert(address).second;
  }
  void release(const std::string& address) {
    std::lock_guard<std::mutex> lock(mutex_);
    addresses_.erase(address);
  }

 private:
  std::mutex mutex_;
  std::set<std::string> addresses_;
};

// Runs the service on a detached thread that owns it: the root lives
// exactly as long as its one communicator's bootstrap needs it.
void launchRoot(Listener listener, const Secret& secret,
                const BootstrapSettings& settings,
                std::function<void()> onStopListening = {}) {
  auto service = std::make_unique<RootService>(
      std::move(listener), secret, settings, std::move(onStopListening));
  try {
    std::thread([service = std::move(service)] {
      try {
        service->run();
      } catch (...) {
        LOG_WARN(kLogBootstrap, "bootstrap root at %s failed: %s",
                 service->address().toString().c_str(),
                 currentExceptionAsError().what());
      }
    }).detach();
  } catch (const std::system_error& e) {
    fail(ncclSystemError, "cannot start the bootstrap root thread: %s",
         e.what());
  }
}

// Listens on the fixed address itself, else on every local address with
// its port (the name may resolve to an address of another interface).
Listener listenOnFixedAddress(const SocketAddress& address) {
  try {
    return Listener(address);
  } catch (const Error& first) {
    try {
      return Listener(
          SocketAddress::wildcard(address.family(), address.port()));
    } catch (const Error&) {
      fail(ncclSystemError,
           "rank 0 cannot start the bootstrap root at HETCCL_COMM_ID/"
           "NCCL_COMM_ID address %s: %s",
           address.toString().c_str(), first.what());
    }
  }
}

}  // namespace

ncclUniqueId createUniqueId() {
  if (auto fixed = fixedUniqueIdFromEnv()) return encodeUniqueId(*fixed);
  return createEphemeralUniqueId(BootstrapSettings::fromEnvironment());
}

ncclUniqueId createEphemeralUniqueId(const BootstrapSettings& settings) {
  UniqueIdContents contents;
  contents.secret = randomSecret();
  Listener listener(chooseLocalAddress());
  contents.root = listener.address();
  launchRoot(std::move(listener), contents.secret, settings);
  return encodeUniqueId(contents);
}

void startRootIfNeeded(const ncclUniqueId& id, int rank,
                       const BootstrapSettings& settings) {
  UniqueIdContents contents = decodeUniqueId(id);
  if (!contents.fixedRoot || rank != 0) return;
  std::string key = contents.root.toString();
  if (!FixedRoots::instance().claim(key)) {
    LOG_INFO(kLogBootstrap, "bootstrap root at %s already runs here",
             key.c_str());
    return;
  }
  try {
    launchRoot(listenOnFixedAddress(contents.root), contents.secret, settings,
               [key] { FixedRoots::instance().release(key); });
  } catch (...) {
    FixedRoots::instance().release(key);
    throw;
  }
}

bool cancelRoot(const ncclUniqueId& id, double timeoutSeconds) {
  UniqueIdContents contents = decodeUniqueId(id);
  Deadline deadline = Deadline::after(timeoutSeconds);
  try {
    // The root of an id from ncclGetUniqueId listened before the id
    // existed: if it refuses now, it is gone, and there is none to cancel.
    Socket socket =
        connectTo(contents.root, deadline, nullptr, "the bootstrap root",
                  contents.fixedRoot ? ConnectMode::kWaitForListener
                                     : ConnectMode::kListenerIsUp);
    RootHello hello;
    hello.request = RootRequest::kCancel;
    hello.secret = contents.secret;
    std::vector<uint8_t> bytes = encodeRootHello(hello);
    socket.sendAll(bytes.data(), bytes.size(), deadline, nullptr,
                   "a cancel request");
    uint8_t reply[kRootReplyHeaderBytes];
    socket.recvAll(reply, sizeof(reply), deadline, nullptr,
                   "the cancel acknowledgement");
    return decodeRootReplyHeader(reply) == ncclSuccess;
  } catch (const Error& e) {
    LOG_INFO(kLogBootstrap, "could not cancel the bootstrap root at %s: %s",
             contents.root.toString().c_str(), e.what());
    return false;
  }
}

}  // namespace hetccl
