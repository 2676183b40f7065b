// The GPU engine's pinned staging: slots of the asked size that do not
// overlap, a released slot held back until the stream has passed its mark,
// neighbours merging into larger slots, and a wait for space that ends on
// an abort or a timeout instead of hanging.
#include "engine/gpu/staging_pool.h"

#include <gtest/gtest.h>

#include <set>

#include "runtime/host/emulated_device_module.h"
#include "support/expect_error.h"

namespace hetccl {
namespace {

constexpr size_t kSlot = 4096;
constexpr size_t kArena = 8 * kSlot;  // slots of up to 2 * kSlot

struct PoolOnStream {
  const DeviceModule& module = emulatedDeviceModule();
  void* stream = nullptr;
  uint64_t gate = 1;  // the stream waits for it to be 1 where asked
  std::unique_ptr<StreamProgress> progress;
  std::unique_ptr<StagingPool> pool;
  AbortSignal abort;

  PoolOnStream() {
    module.api().streamCreate(&stream);
    progress = std::make_unique<StreamProgress>(module, stream);
    pool = std::make_unique<StagingPool>(module, *progress, kArena, 0);
  }
  ~PoolOnStream() {
    __atomic_store_n(&gate, 1, __ATOMIC_RELEASE);
    module.api().streamSynchronize(stream);
    module.api().streamDestroy(stream);
  }
  // The stream stops until open() at work enqueued from now on.
  void close() {
    __atomic_store_n(&gate, 0, __ATOMIC_RELEASE);
    module.api().waitValue64(stream, &gate, 1);
  }
  void open() { __atomic_store_n(&gate, 1, __ATOMIC_RELEASE); }
  char* take(size_t bytes) { return pool->acquire(bytes, abort, 10); }
  void fill() {
    while (true) {
      AbortSignal quick;
      try {
        pool->acquire(kSlot, quick, 0.05);
      } catch (const Error&) {
        return;
      }
    }
  }
};

TEST(StagingPool, SlotsDoNotOverlap) {
  PoolOnStream p;
  std::set<char*> slots;
  for (int i = 0; i < 8; ++i) slots.insert(p.take(kSlot));
  ASSERT_EQ(slots.size(), 8u);
  char* previous = nullptr;
  for (char* slot : slots) {
    if (previous) EXPECT_GE(slot - previous, static_cast<ptrdiff_t>(kSlot));
    previous = slot;
  }
}

TEST(StagingPool, AReleasedSlotWaitsForTheStreamToPassItsMark) {
  PoolOnStream p;
  char* first = p.take(kSlot);
  p.fill();
  p.close();
  p.pool->release(first, p.progress->mark());
  AbortSignal timedOut;  // a timeout raises the signal it waited under
  Error e = expectError([&] { p.pool->acquire(kSlot, timedOut, 0.2); });
  EXPECT_NE(std::string(e.what()).find("free pinned staging"),
            std::string::npos)
      << e.what();
  p.open();
  EXPECT_EQ(p.take(kSlot), first);
}

TEST(StagingPool, ReleasedNeighboursMergeIntoALargerSlot) {
  PoolOnStream p;
  char* a = p.take(kSlot);
  char* b = p.take(kSlot);
  p.fill();
  p.pool->release(a, 0);
  p.pool->release(b, 0);
  EXPECT_EQ(p.take(kSlot + 1), a);
}

TEST(StagingPool, AnAbortEndsAWaitForSpace) {
  PoolOnStream p;
  p.fill();
  p.abort.raise(ncclRemoteError, "test: peer gone");
  Error e = expectError([&] { p.take(kSlot); });
  EXPECT_EQ(e.code(), ncclRemoteError);
}

TEST(StagingPool, ATransferLargerThanAQuarterIsRefused) {
  PoolOnStream p;
  Error e = expectError([&] { p.take(kArena / 4 + 1); });
  EXPECT_EQ(e.code(), ncclInternalError);
}

}  // namespace
}  // namespace hetccl
