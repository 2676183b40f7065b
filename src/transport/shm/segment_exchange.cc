#include "transport/shm/segment_exchange.h"

#include <cstdint>
#include <cstring>
#include <optional>

#include "util/collective_setup.h"
#include "util/error.h"

namespace hetccl {
namespace {

constexpr size_t kNameBytes = 64;

// What each rank tells the others about its segment.
struct SegmentRecord {
  char name[kNameBytes];  // empty: no segment
  uint64_t bytes;
};

std::vector<SegmentRecord> gatherRecords(Oob& oob, const ShmSegment& own) {
  std::vector<SegmentRecord> records(oob.nranks());
  std::memset(records.data(), 0, records.size() * sizeof(SegmentRecord));
  SegmentRecord& mine = records[oob.rank()];
  std::strncpy(mine.name, own.name().c_str(), kNameBytes - 1);
  mine.bytes = own.size();
  oob.allGather(records.data(), sizeof(SegmentRecord));
  for (SegmentRecord& record : records) record.name[kNameBytes - 1] = '\0';
  return records;
}

ShmSegment createOwn(const SegmentExchange& exchange) {
  const size_t bytes = exchange.ownBytes();
  if (bytes == 0) return {};
  ShmSegment own =
      ShmSegment::create(ShmSegment::uniqueName(exchange.namePrefix), bytes);
  if (exchange.format) exchange.format(own);
  return own;
}

// Maps what this rank needs of the others' segments, in rank order; this
// rank's own segment goes to its place unmapped again.
void mapChosen(Oob& oob, const SegmentExchange& exchange,
               const std::vector<SegmentRecord>& records,
               std::vector<ShmSegment>& segments) {
  const int rank = oob.rank();
  for (int r = 0; r < oob.nranks(); ++r) {
    if (!exchange.maps(r)) continue;
    if (records[r].bytes == 0)
      fail(ncclInvalidUsage,
           "%s: rank %d maps rank %d's segment, but rank %d created none "
           "(peer lists must be symmetric)",
           exchange.what, rank, r, r);
    if (r != rank)
      segments[r] = ShmSegment::open(records[r].name, records[r].bytes);
    if (exchange.mapped) exchange.mapped(r, segments[r]);
  }
}

}  // namespace

void exchangeSegments(Oob& oob, const SegmentExchange& exchange,
                      std::vector<ShmSegment>& segments) {
  std::optional<Error> failure;
  segments.clear();
  segments.resize(oob.nranks());
  ShmSegment& own = segments[oob.rank()];
  captureFailure(failure, [&] { own = createOwn(exchange); });
  agreeOnSuccess(oob, failure, exchange.what, "creating its segment");
  const std::vector<SegmentRecord> records = gatherRecords(oob, own);
  captureFailure(failure, [&] { mapChosen(oob, exchange, records, segments); });
  // The agreement is a barrier: every rank has mapped what it needs, so the
  // name can go now and a process killed later leaks nothing in /dev/shm.
  // The name goes on failure too, when the segments are destroyed.
  agreeOnSuccess(oob, failure, exchange.what, "mapping its peers' segments");
  own.unlink();
}

}  // namespace hetccl
