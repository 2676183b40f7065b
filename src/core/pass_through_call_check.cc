#include "core/pass_through_call_check.h"

#include "bootstrap/bootstrap.h"
#include "op/call_disagreement.h"
#include "op/op_traits.h"
#include "util/error.h"
#include "util/wire.h"

namespace hetccl {
namespace {

// Bootstrap tags of their own (the communicator's exchanges count up from
// 1, a domain's have bit 30): one for the collectives' all-gather, one per
// direction for the transfers. Each (peer, tag) delivers in order, so a
// rank's k-th send to a peer meets that peer's k-th receive from it, as
// NCCL matches them.
constexpr uint32_t kTagSpace = 0x20000000u;
constexpr uint32_t kCollectivesTag = kTagSpace | 1;
constexpr uint32_t kSendsTag = kTagSpace | 2;
constexpr uint32_t kReceivesTag = kTagSpace | 3;

// What a rank's launch holds of collectives, in a few bytes: its first
// call named in full, the others in the digest. Encoded, so that hosts of
// either byte order compare them alike.
struct CollectivesRecord {
  CallSignature first;
  uint64_t digest = 0;
  uint32_t collectives = 0;

  static constexpr size_t kEncodedBytes = kEncodedCallBytes + 12;
  void encode(uint8_t* out) const {
    encodeCall(first, out);
    storeLe64(out + kEncodedCallBytes, digest);
    storeLe32(out + kEncodedCallBytes + 8, collectives);
  }
  static CollectivesRecord decode(const uint8_t* in) {
    return {decodeCall(in), loadLe64(in + kEncodedCallBytes),
            loadLe32(in + kEncodedCallBytes + 8)};
  }
  bool operator==(const CollectivesRecord& o) const {
    return callsAgree(first, o.first) && digest == o.digest &&
           collectives == o.collectives;
  }
};

CollectivesRecord recordOf(const std::vector<CallSignature>& calls) {
  uint64_t digest = fnv1a64(nullptr, 0);
  for (const CallSignature& call : calls) {
    uint8_t bytes[kEncodedCallBytes];
    encodeCall(call, bytes);
    digest = fnv1a64(bytes, sizeof(bytes), digest);
  }
  return {calls[0], digest, static_cast<uint32_t>(calls.size())};
}

// Every rank words it the same way: rank 0's launch against the first
// rank whose launch differs from it.
[[noreturn]] void failDisagreement(int rank, const CollectivesRecord& theirs,
                                   const CollectivesRecord& rank0s) {
  if (!callsAgree(rank0s.first, theirs.first))
    throw callDisagreement(0, rank0s.first, rank, theirs.first);
  fail(ncclInvalidUsage,
       "op #%llu: rank 0 launched %u collective(s) starting with %s, but "
       "rank %d's launch of %u starting with the same differs in a later "
       "one (count, type, reduction, root or order)",
       static_cast<unsigned long long>(rank0s.first.sequence),
       rank0s.collectives, describeCall(rank0s.first).c_str(), rank,
       theirs.collectives);
}

}  // namespace

void PassThroughCallCheck::post(const std::vector<Op>& ops) {
  for (const Op& op : ops) {
    if (!isPointToPoint(op.kind)) continue;
    uint8_t mine[kEncodedCallBytes];
    encodeCall(signatureOf(op), mine);
    bootstrap_.send(op.root, op.kind == OpKind::Send ? kSendsTag : kReceivesTag,
                    mine, sizeof(mine));
  }
}

void PassThroughCallCheck::verify(const std::vector<Op>& ops) {
  std::vector<CallSignature> collectives;
  for (const Op& op : ops)
    if (!isPointToPoint(op.kind)) collectives.push_back(signatureOf(op));
  verifyCollectives(collectives);
  for (const Op& op : ops)
    if (isPointToPoint(op.kind)) verifyTransfer(signatureOf(op));
}

void PassThroughCallCheck::verifyCollectives(
    const std::vector<CallSignature>& mine) {
  if (mine.empty()) return;
  constexpr size_t kBytes = CollectivesRecord::kEncodedBytes;
  std::vector<uint8_t> records(bootstrap_.nranks() * kBytes);
  recordOf(mine).encode(&records[bootstrap_.rank() * kBytes]);
  bootstrap_.allGather(records.data(), kBytes, kCollectivesTag);
  const CollectivesRecord rank0s = CollectivesRecord::decode(&records[0]);
  for (int r = 1; r < bootstrap_.nranks(); ++r) {
    const CollectivesRecord theirs =
        CollectivesRecord::decode(&records[r * kBytes]);
    if (!(theirs == rank0s)) failDisagreement(r, theirs, rank0s);
  }
}

// A send meets the peer's receive from this rank, a receive its send.
void PassThroughCallCheck::verifyTransfer(const CallSignature& mine) {
  const bool sending = mine.call == OpKind::Send;
  uint8_t bytes[kEncodedCallBytes];
  bootstrap_.recv(mine.root, sending ? kReceivesTag : kSendsTag, bytes,
                  sizeof(bytes));
  const CallSignature theirs = decodeCall(bytes);
  if (!callsAgree(mine, theirs))
    throw callDisagreement(bootstrap_.rank(), mine, mine.root, theirs);
}

}  // namespace hetccl
