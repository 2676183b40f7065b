// The outboxes' flags on the emulated device module: they start free; a
// release sets every bit of every rank's flags and says why (a failure, or
// a rank that went away); after a failure they are set again and again, so
// that a CUDA graph's replay, which writes its flags' fixed values anew,
// cannot block on them.
#include "engine/gpu/hostshm/device_outboxes.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "runtime/host/emulated_device_module.h"
#include "support/in_process_oob.h"
#include "support/thread_ranks.h"

namespace hetccl {
namespace {

constexpr uint64_t kAllBits = DeviceOutboxes::kFree | DeviceOutboxes::kFilled |
                              DeviceOutboxes::kResult |
                              DeviceOutboxes::kReleasedBit;

uint64_t load(const uint64_t* flag) {
  return __atomic_load_n(flag, __ATOMIC_ACQUIRE);
}

void store(uint64_t* flag, uint64_t value) {
  __atomic_store_n(flag, value, __ATOMIC_RELEASE);
}

// Whether `flag` holds `bits` within `limit`.
bool raisedWithin(const uint64_t* flag, uint64_t bits,
                  std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while ((load(flag) & bits) != bits)
    if (std::chrono::steady_clock::now() > deadline) return false;
  return true;
}

// Two ranks' outboxes; `body` runs on rank 0 after both exist, while rank
// 1 keeps its outboxes until rank 0 is done.
constexpr size_t kLowLatencyBytes = 1001;

template <typename Body>
void withTwoRanks(Body body) {
  InProcessWorld world(2);
  runRanks(2, [&](int rank) {
    InProcessOob oob(world, rank);
    DeviceOutboxes outboxes(oob, emulatedDeviceModule(), 4096, 4096,
                            kLowLatencyBytes);
    if (rank == 0) body(outboxes);
    oob.barrier();
  });
}

TEST(DeviceOutboxes, FlagsStartFree) {
  withTwoRanks([](DeviceOutboxes& boxes) {
    for (uint64_t chunk = 0; chunk < DeviceOutboxes::kSlots; ++chunk) {
      EXPECT_EQ(load(boxes.slotFlag(1, chunk, 0)), DeviceOutboxes::kFree);
      EXPECT_EQ(load(boxes.pairFlag(1, 0, chunk)), DeviceOutboxes::kFree);
    }
    EXPECT_EQ(boxes.failedRank(), -1);
    EXPECT_FALSE(boxes.left(0));
    EXPECT_EQ(load(boxes.releaseWord()), 0u);
  });
}

// Two halves of 2 lines per 8 bytes, zero, between the flags and the
// slots: the last line of each area is the owner's alone.
TEST(DeviceOutboxes, LineAreasStartZeroAndOverlapNothing) {
  withTwoRanks([](DeviceOutboxes& boxes) {
    const size_t lines = 2 * boxes.lowLatencyHalfLines();
    EXPECT_EQ(boxes.lowLatencyHalfLines(), 2 * ((kLowLatencyBytes + 7) / 8));
    for (int owner = 0; owner < 2; ++owner) {
      uint64_t* area = boxes.lowLatencyArea(owner);
      for (size_t i = 0; i < lines; ++i) ASSERT_EQ(area[i], 0u) << i;
      EXPECT_LE(reinterpret_cast<char*>(area + lines), boxes.slot(owner, 0));
      store(&area[lines - 1], ~uint64_t(0));
    }
    EXPECT_EQ(load(boxes.slotFlag(0, 0, 1)), DeviceOutboxes::kFree);
    EXPECT_EQ(load(boxes.slotFlag(1, 0, 0)), DeviceOutboxes::kFree);
    EXPECT_NE(boxes.lowLatencyArea(0), boxes.lowLatencyArea(1));
  });
}

// A release lets this rank's waits go and no other rank's: as an owner
// it waits for kFree on its own flags, as a reader for kFilled or kResult
// on its column of the others'. The others wait for the opposite bits.
TEST(DeviceOutboxes, AReleaseRaisesOnlyThisRanksWaits) {
  constexpr uint64_t kOwnerRelease =
      DeviceOutboxes::kFree | DeviceOutboxes::kReleasedBit;
  constexpr uint64_t kReaderRelease = kAllBits;
  withTwoRanks([&](DeviceOutboxes& boxes) {
    boxes.releaseWaits();
    EXPECT_EQ(boxes.failedRank(), 0);
    EXPECT_EQ(load(boxes.releaseWord()), 1u);
    EXPECT_FALSE(boxes.left(0));
    // Rank 1 reads rank 0's slots and channel waiting for kFilled: not
    // released.
    EXPECT_EQ(load(boxes.slotFlag(0, 2, 1)), kOwnerRelease);
    EXPECT_EQ(load(boxes.pairFlag(0, 1, 0)), kOwnerRelease);
    // Rank 0 reads rank 1's: released.
    EXPECT_EQ(load(boxes.slotFlag(1, 2, 0)), kReaderRelease);
    EXPECT_EQ(load(boxes.pairFlag(1, 0, 3)),
              kAllBits & ~DeviceOutboxes::kResult);
    // Only rank 0's lanes wait on its transfers' agreement words.
    for (auto direction :
         {DeviceOutboxes::kSending, DeviceOutboxes::kReceiving}) {
      EXPECT_EQ(load(boxes.transferAgreedWord(0, 1, direction)),
                DeviceOutboxes::kReleasedBit);
      EXPECT_EQ(load(boxes.transferAgreedWord(1, 0, direction)), 0u);
    }
    // A replay writes its fixed values again: they do not stay.
    for (int i = 0; i < 3; ++i) {
      store(boxes.slotFlag(0, 1, 1), DeviceOutboxes::kFilled);
      store(boxes.slotFlag(1, 1, 0), DeviceOutboxes::kFree);
      EXPECT_TRUE(raisedWithin(boxes.slotFlag(0, 1, 1), kOwnerRelease,
                               std::chrono::milliseconds(200)));
      EXPECT_TRUE(raisedWithin(boxes.slotFlag(1, 1, 0), kReaderRelease,
                               std::chrono::milliseconds(200)));
    }
  });
}

// A failure is reported to the others, but releases nothing: the streams
// waiting for the failed rank stay blocked until their own rank releases
// them.
TEST(DeviceOutboxes, AFailureReleasesNothing) {
  withTwoRanks([](DeviceOutboxes& boxes) {
    boxes.markFailed(ncclRemoteError, "rank 2 (host b, pid 7) exited");
    boxes.markFailed(ncclSystemError, "a later failure is not kept");
    EXPECT_EQ(boxes.failedRank(), 0);
    EXPECT_EQ(boxes.failureOf(0).code(), ncclRemoteError);
    EXPECT_STREQ(boxes.failureOf(0).what(), "rank 2 (host b, pid 7) exited");
    EXPECT_EQ(boxes.failureOf(1).code(), ncclSuccess);
    EXPECT_EQ(load(boxes.releaseWord()), 0u);
    EXPECT_EQ(load(boxes.slotFlag(1, 2, 0)), DeviceOutboxes::kFree);
    EXPECT_EQ(load(boxes.pairFlag(0, 1, 0)), DeviceOutboxes::kFree);
  });
}

// A rank that leaves publishes how far it went and releases nothing: a
// peer's operation beyond that must not run on without it.
TEST(DeviceOutboxes, ARankThatLeavesReleasesNothing) {
  withTwoRanks([](DeviceOutboxes& boxes) {
    boxes.markLeft(17);
    EXPECT_TRUE(boxes.left(0));
    EXPECT_FALSE(boxes.left(1));
    EXPECT_EQ(boxes.collectivesCompletedBy(0), 17u);
    EXPECT_EQ(load(boxes.releaseWord()), 0u);
    EXPECT_EQ(boxes.failedRank(), -1);
    EXPECT_EQ(load(boxes.pairFlag(0, 1, 0)), DeviceOutboxes::kFree);
    EXPECT_EQ(load(boxes.slotFlag(0, 1, 1)), DeviceOutboxes::kFree);
  });
}

}  // namespace
}  // namespace hetccl
