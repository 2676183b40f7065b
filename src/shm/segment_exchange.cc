#include "shm/segment_exchange.h"

#include <cstdint>
#include <cstring>
#include <optional>

#include "shm/shm_names.h"
#include "shm/shm_room.h"
#include "util/collective_setup.h"
#include "util/error.h"

namespace hetccl {
namespace {

constexpr size_t kNameBytes = 64;

// What each rank tells the others about its segment.
struct SegmentRecord {
  char name[kNameBytes];  // empty: no segment
  ShmDemand demand;       // its size, and the room this rank measured
};

// Every rank's name and size are known before any segment exists, so
// that if a rank dies after creating its segment, the others can remove
// its name (it cannot any more). The room is measured before the
// all-gather, so before any rank of this exchange created its segment.
std::vector<SegmentRecord> gatherRecords(Oob& oob,
                                         const SegmentExchange& exchange,
                                         size_t ownBytes) {
  std::vector<SegmentRecord> records(oob.nranks());
  std::memset(records.data(), 0, records.size() * sizeof(SegmentRecord));
  SegmentRecord& mine = records[oob.rank()];
  if (ownBytes > 0) {
    const std::string name = uniqueSegmentName(exchange.namePrefix);
    std::strncpy(mine.name, name.c_str(), kNameBytes - 1);
    mine.demand = {ownBytes, ShmRoom::measure()};
  }
  oob.allGather(records.data(), sizeof(SegmentRecord));
  for (SegmentRecord& record : records) record.name[kNameBytes - 1] = '\0';
  return records;
}

// Before anything is created: every rank of a host sees the same demands,
// so all of them refuse together, and none has taken the memory yet.
void checkRoom(int rank, const SegmentExchange& exchange,
               const std::vector<SegmentRecord>& records) {
  std::vector<ShmDemand> demands;
  for (const SegmentRecord& record : records) demands.push_back(record.demand);
  checkShmRoom(demands, rank, exchange.what, exchange.sizedBy);
}

ShmSegment createOwn(const SegmentExchange& exchange,
                     const SegmentRecord& mine) {
  if (mine.demand.bytes == 0) return {};
  ShmSegment own = ShmSegment::create(mine.name, mine.demand.bytes);
  if (exchange.format) exchange.format(own);
  return own;
}

// After a failed exchange: the names of the peers' segments, of which a
// dead peer's would stay in /dev/shm. Names already gone are no matter.
void removePeersNames(int rank, const std::vector<SegmentRecord>& records) {
  for (size_t r = 0; r < records.size(); ++r)
    if (static_cast<int>(r) != rank && records[r].demand.bytes > 0)
      ShmSegment::removeName(records[r].name);
}

// Maps what this rank needs of the others' segments, in rank order; this
// rank's own segment goes to its place unmapped again.
void mapChosen(Oob& oob, const SegmentExchange& exchange,
               const std::vector<SegmentRecord>& records,
               std::vector<ShmSegment>& segments) {
  const int rank = oob.rank();
  for (int r = 0; r < oob.nranks(); ++r) {
    if (!exchange.maps(r)) continue;
    if (records[r].demand.bytes == 0)
      fail(ncclInvalidUsage,
           "%s: rank %d maps rank %d's segment, but rank %d created none "
           "(peer lists must be symmetric)",
           exchange.what, rank, r, r);
    if (r != rank)
      segments[r] = ShmSegment::open(records[r].name, records[r].demand.bytes);
    if (exchange.mapped) exchange.mapped(r, segments[r]);
  }
}

}  // namespace

void exchangeSegments(Oob& oob, const SegmentExchange& exchange,
                      std::vector<ShmSegment>& segments) {
  std::optional<Error> failure;
  segments.clear();
  segments.resize(oob.nranks());
  size_t ownBytes = 0;
  // A failure here holds back the creation below and fails its agreement.
  // Names that dead processes left hold room this exchange may need.
  captureFailure(failure, [&] {
    removeNamesOfGoneCreators();
    ownBytes = exchange.ownBytes();
  });
  const std::vector<SegmentRecord> records =
      gatherRecords(oob, exchange, ownBytes);
  try {
    captureFailure(failure, [&] { checkRoom(oob.rank(), exchange, records); });
    ShmSegment& own = segments[oob.rank()];
    captureFailure(failure,
                   [&] { own = createOwn(exchange, records[oob.rank()]); });
    agreeOnSuccess(oob, failure, exchange.what, "creating its segment");
    captureFailure(failure,
                   [&] { mapChosen(oob, exchange, records, segments); });
    // The agreement is a barrier: every rank has mapped what it needs, so
    // the name can go now and a process killed later leaks nothing in
    // /dev/shm. The name goes on failure too, when the segments are
    // destroyed.
    agreeOnSuccess(oob, failure, exchange.what, "mapping its peers' segments");
    own.unlink();
  } catch (const std::exception&) {
    removePeersNames(oob.rank(), records);
    throw;
  }
}

}  // namespace hetccl
