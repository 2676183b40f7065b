#include "algo/self_transfers.h"

#include "util/dtype.h"
#include "util/error.h"

namespace hetccl {

SelfTransfers splitSelfTransfers(int rank, const std::vector<Op>& ops) {
  SelfTransfers split;
  std::vector<const Op*> sends, recvs;
  for (const Op& op : ops) {
    if (op.root != rank)
      split.others.push_back(op);
    else
      (op.kind == OpKind::Send ? sends : recvs).push_back(&op);
  }
  if (sends.size() != recvs.size())
    fail(ncclInvalidUsage,
         "rank %d posts %zu send(s) to itself and %zu receive(s) from itself "
         "in one group; they must pair up",
         rank, sends.size(), recvs.size());
  for (size_t i = 0; i < sends.size(); ++i) {
    const size_t bytes = sends[i]->count * dtypeSize(sends[i]->dtype);
    const size_t expected = recvs[i]->count * dtypeSize(recvs[i]->dtype);
    if (bytes != expected)
      fail(ncclInvalidUsage,
           "rank %d sends %zu bytes to itself where its receive expects %zu",
           rank, bytes, expected);
    split.copies.push_back({recvs[i]->recvbuff, sends[i]->sendbuff, bytes});
  }
  return split;
}

}  // namespace hetccl
