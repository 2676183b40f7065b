#include "algo/link_probe.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <vector>

#include "util/collective_setup.h"
#include "util/error.h"

namespace hetccl {
namespace {

constexpr int kRoundTrips = 16;
// Small transfers posted at once, whose spread over a round trip is what
// each further transfer costs its sender.
constexpr int kBurst = 32;
constexpr int kBurstRounds = 3;
constexpr int kBulkRounds = 3;
constexpr size_t kSmallBytes = 8;
constexpr size_t kBulkBytes = size_t{2} << 20;
constexpr int kBulkInFlight = 4;

using Clock = std::chrono::steady_clock;

// The probe's transfers are sends and receives of their own (number 0,
// before any user's), so that the links' checks of calls that disagree
// let them through.
CallSignature probeSignature(OpKind kind, size_t bytes) {
  CallSignature call;
  call.call = kind;
  call.count = bytes;
  call.dtype = ncclInt8;
  return call;
}

class ProbeEnd {
 public:
  ProbeEnd(Link& link, const AbortSignal& abort, double timeoutSeconds)
      : link_(link), abort_(abort), timeoutSeconds_(timeoutSeconds) {}

  void send(size_t bytes) {
    link_.send(outbox(bytes), bytes, probeSignature(OpKind::Send, bytes))
        ->wait(abort_, timeoutSeconds_);
  }
  void recv(size_t bytes) {
    link_.recv(inbox(bytes), bytes, probeSignature(OpKind::Recv, bytes))
        ->wait(abort_, timeoutSeconds_);
  }
  // `count` small transfers one way, posted at once.
  void sendBurst(int count) { waitAll(post(OpKind::Send, kSmallBytes, count)); }
  void recvBurst(int count) { waitAll(post(OpKind::Recv, kSmallBytes, count)); }
  // `count` transfers of `bytes` each way at once, as the plans load a
  // link (a chunk's pieces in flight on its lanes).
  void exchange(size_t bytes, int count) {
    Requests requests = post(OpKind::Send, bytes, count);
    for (auto& request : post(OpKind::Recv, bytes, count))
      requests.push_back(std::move(request));
    waitAll(requests);
  }

 private:
  using Requests = std::vector<std::shared_ptr<TransferRequest>>;

  // `count` transfers of `bytes`, each at its own place in the buffer.
  Requests post(OpKind kind, size_t bytes, int count) {
    const CallSignature call = probeSignature(kind, bytes);
    Requests requests;
    for (int i = 0; i < count; ++i) {
      const size_t at = i * bytes;
      requests.push_back(
          kind == OpKind::Send
              ? link_.send(outbox(bytes * count) + at, bytes, call)
              : link_.recv(inbox(bytes * count) + at, bytes, call));
    }
    return requests;
  }
  void waitAll(const Requests& requests) {
    for (const auto& request : requests) request->wait(abort_, timeoutSeconds_);
  }

  static char* sized(std::vector<char>& buffer, size_t bytes) {
    if (buffer.size() < bytes) buffer.resize(bytes);
    return buffer.data();
  }
  char* outbox(size_t bytes) { return sized(outbox_, bytes); }
  char* inbox(size_t bytes) { return sized(inbox_, bytes); }

  Link& link_;
  const AbortSignal& abort_;
  const double timeoutSeconds_;
  std::vector<char> outbox_;
  std::vector<char> inbox_;
};

// The fastest of `rounds` runs of `once`, in microseconds.
template <typename Once>
double fastestUs(int rounds, Once once) {
  double fastest = 1e30;
  for (int i = 0; i < rounds; ++i) {
    const auto start = Clock::now();
    once();
    fastest = std::min(
        fastest, std::chrono::duration<double, std::micro>(Clock::now() - start)
                     .count());
  }
  return fastest;
}

// The measuring end: the fastest round trip, the fastest burst of kBurst
// small transfers with its answer, and the fastest exchange of
// kBulkInFlight transfers of kBulkBytes each way with its answer.
LinkCost measureFrom(ProbeEnd& end) {
  const double roundTripUs = fastestUs(kRoundTrips, [&] {
    end.send(kSmallBytes);
    end.recv(kSmallBytes);
  });
  const double burstUs = fastestUs(kBurstRounds, [&] {
    end.sendBurst(kBurst);
    end.recv(kSmallBytes);
  });
  const double bulkUs = fastestUs(kBulkRounds, [&] {
    end.exchange(kBulkBytes, kBulkInFlight);
    end.recv(kSmallBytes);
  });
  // A bulk transfer no slower than a round trip says only that the rate
  // is high: a tenth of a round trip stands for its time.
  const double bulkTransferUs =
      std::max(bulkUs - roundTripUs, roundTripUs / 10);
  return {roundTripUs / 2, kBulkBytes * kBulkInFlight / (bulkTransferUs * 1e3),
          std::max(0.0, (burstUs - roundTripUs) / (kBurst - 1))};
}

void answer(ProbeEnd& end) {
  for (int i = 0; i < kRoundTrips; ++i) {
    end.recv(kSmallBytes);
    end.send(kSmallBytes);
  }
  for (int i = 0; i < kBurstRounds; ++i) {
    end.recvBurst(kBurst);
    end.send(kSmallBytes);
  }
  for (int i = 0; i < kBulkRounds; ++i) {
    end.exchange(kBulkBytes, kBulkInFlight);
    end.send(kSmallBytes);
  }
}

}  // namespace

LinkCost measureLinkCost(Oob& oob, const DomainMap& domains,
                         const CrossDomainLinks& links,
                         const AbortSignal& abort, double timeoutSeconds) {
  const int rank = oob.rank();
  const int first = domains.members(0).front();
  LinkCost own;
  std::optional<Error> failure;
  captureFailure(failure, [&] {
    for (int d = 1; d < domains.count(); ++d) {
      const int other = domains.members(d).front();
      if (rank == other) {
        ProbeEnd end(links.to(first), abort, timeoutSeconds);
        own = measureFrom(end);
      } else if (rank == first) {
        ProbeEnd end(links.to(other), abort, timeoutSeconds);
        answer(end);
      }
    }
  });
  // Every rank fails alike and says why, not only the ones whose probe
  // failed.
  if (failure)
    failure = Error(failure->code(),
                    format("measuring the link between domains at init: %s",
                           failure->what()));
  agreeOnSuccess(oob, failure, "heterogeneous communicator",
                 "creating the communicator");
  std::vector<LinkCost> all(oob.nranks());
  all[rank] = own;
  oob.allGather(all.data(), sizeof(LinkCost));
  LinkCost slowest;
  for (int r = 0; r < oob.nranks(); ++r) {
    const LinkCost& cost = all[r];
    if (cost.gbps <= 0) continue;
    slowest.alphaUs = std::max(slowest.alphaUs, cost.alphaUs);
    slowest.transferUs = std::max(slowest.transferUs, cost.transferUs);
    slowest.gbps =
        slowest.gbps == 0 ? cost.gbps : std::min(slowest.gbps, cost.gbps);
  }
  return slowest;
}

}  // namespace hetccl
