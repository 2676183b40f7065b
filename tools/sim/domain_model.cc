#include "domain_model.h"

#include <algorithm>

#include "op/op_traits.h"
#include "util/dtype.h"

namespace hetccl::sim {

double domainCollectiveSeconds(const Op& op, int ranks,
                               const LibraryModel& library,
                               double busBytesPerSecond) {
  const double n = ranks;
  const double bytes = static_cast<double>(op.count * dtypeSize(op.dtype));
  // A library of one rank moves nothing between ranks but still copies an
  // out-of-place input to the output (a read and a write).
  if (ranks == 1)
    return library.alphaUs * 1e-6 +
           (op.sendbuff != op.recvbuff && !isPointToPoint(op.kind)
                ? 2 * bytes / (library.memoryGBps * 1e9)
                : 0);
  const double ring = (n - 1) / n;
  double busBytes = 0;
  switch (op.kind) {
    case OpKind::AllReduce:
      busBytes = 2 * ring * bytes;
      break;
    case OpKind::ReduceScatter:
    case OpKind::AllGather:
    case OpKind::AlltoAll:
    case OpKind::Gather:
    case OpKind::Scatter:
      busBytes = ring * bytes * n;  // count is per rank
      break;
    case OpKind::Broadcast:
    case OpKind::Reduce:
      busBytes = ranks > 1 ? bytes : 0;
      break;
    case OpKind::Send:
    case OpKind::Recv:
      busBytes = bytes;
      break;
  }
  return library.alphaUs * 1e-6 + busBytes / busBytesPerSecond;
}

DomainLibrary::DomainLibrary(Scheduler& scheduler, Wires& wires,
                             const ClusterSpec& cluster, int domain,
                             std::vector<int> members)
    : scheduler_(scheduler),
      wires_(wires),
      library_(cluster.domains[domain].library),
      members_(std::move(members)) {
  const DomainSpec& spec = cluster.domains[domain];
  busBytesPerSecond_ = library_.busGBps * 1e9;
  if (spec.hosts > 1) {
    const double nicShare =
        cluster.nics.perHost * cluster.nics.gbps * 1e9 / 8 / spec.ranksPerHost;
    busBytesPerSecond_ = std::min(busBytesPerSecond_, nicShare);
  }
}

DomainLibrary::Launch DomainLibrary::describe(
    const std::vector<Op>& ops) const {
  Launch launch;
  // A group's collectives start together (one launch): one alpha, their
  // bus bytes one after another.
  const double alpha = library_.alphaUs * 1e-6;
  launch.seconds = alpha;
  for (const Op& op : ops) {
    if (!isPointToPoint(op.kind)) {
      launch.collectives = true;
      launch.seconds +=
          domainCollectiveSeconds(op, static_cast<int>(members_.size()),
                                  library_, busBytesPerSecond_) -
          alpha;
      continue;
    }
    launch.transfers.push_back(
        {op.root,
         op.kind == OpKind::Send ? TransferWay::kSend : TransferWay::kReceive,
         op.count * dtypeSize(op.dtype)});
  }
  return launch;
}

void DomainLibrary::launch(int rank, uint64_t index, const Launch& launch) {
  std::vector<std::shared_ptr<SimRequest>> transfers;
  for (const Launch::Transfer& transfer : launch.transfers)
    transfers.push_back(wires_.post(rank, members_[transfer.peer], transfer.way,
                                    transfer.bytes));
  if (launch.collectives) {
    Gathering& gathering = gatherings_[index];
    gathering.waiters.push_back(scheduler_.current());
    if (++gathering.arrived == static_cast<int>(members_.size())) {
      busySeconds_ += launch.seconds;
      scheduler_.at(scheduler_.now() + launch.seconds, [this, index] {
        Gathering& done = gatherings_[index];
        done.complete = true;
        for (int waiter : done.waiters) scheduler_.resume(waiter);
      });
    }
    while (!gatherings_[index].complete) scheduler_.suspend();
    if (--gatherings_[index].arrived == 0) gatherings_.erase(index);
  }
  static const AbortSignal kNever;
  for (auto& transfer : transfers) transfer->wait(kNever, 0);
}

void SimExecutor::launch(const std::vector<Op>& ops, StreamHandle) {
  const bool collectives =
      std::any_of(ops.begin(), ops.end(),
                  [](const Op& op) { return !isPointToPoint(op.kind); });
  const uint64_t index = collectives ? collectiveLaunches_++ : 0;
  if (stream_ == nullptr)
    return library_.launch(rank_, index, library_.describe(ops));
  stream_->enqueue([this, index, launch = library_.describe(ops)] {
    library_.launch(rank_, index, launch);
  });
}

}  // namespace hetccl::sim
