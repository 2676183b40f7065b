// The emulated GPU's hardware queues (HETCCL_EMULATED_QUEUES): streams are
// dealt over the queues as they are made, and a queue runs its work in the
// order it was enqueued, whatever the stream, as a GPU's queue does.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <array>
#include <atomic>
#include <chrono>
#include <thread>

#include "runtime/host/emulated_device_module.h"

namespace hetccl {
namespace {

// Read once, when the module first makes a stream: set before any test.
const bool kTwoQueues = ::setenv("HETCCL_EMULATED_QUEUES", "2", 1) == 0;

struct Stream {
  const DeviceModule& module = emulatedDeviceModule();
  void* handle = nullptr;
  Stream() { EXPECT_EQ(module.api().streamCreate(&handle), 0); }
  ~Stream() { module.api().streamDestroy(handle); }
};

uint64_t* address(std::atomic<uint64_t>& word) {
  return reinterpret_cast<uint64_t*>(&word);
}

// Streams 0 and 2 share a queue, stream 1 has the other. A wait at the
// head of the shared queue holds stream 2's later write back, and only
// that: stream 1's write goes through at once.
TEST(EmulatedQueues, AWaitHoldsBackLaterWorkOfItsQueueOnly) {
  ASSERT_TRUE(kTwoQueues);
  std::array<Stream, 3> streams;
  const auto& api = streams[0].module.api();
  std::atomic<uint64_t> gate{0}, sameQueue{0}, otherQueue{0};
  ASSERT_EQ(api.waitValue64(streams[0].handle, address(gate), 1), 0);
  ASSERT_EQ(api.writeValue64(streams[2].handle, address(sameQueue), 1), 0);
  ASSERT_EQ(api.writeValue64(streams[1].handle, address(otherQueue), 1), 0);
  ASSERT_EQ(api.streamSynchronize(streams[1].handle), 0);
  EXPECT_EQ(otherQueue.load(), 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(sameQueue.load(), 0u) << "ran past the wait ahead of it";
  gate.store(1);
  ASSERT_EQ(api.streamSynchronize(streams[2].handle), 0);
  EXPECT_EQ(sameQueue.load(), 1u);
  ASSERT_EQ(api.streamSynchronize(streams[0].handle), 0);
}

// Work enqueued before the wait runs, whichever stream of the queue it
// came by: the order is the enqueueing's, not the streams'.
TEST(EmulatedQueues, WorkEnqueuedBeforeAWaitRuns) {
  ASSERT_TRUE(kTwoQueues);
  std::array<Stream, 3> streams;
  const auto& api = streams[0].module.api();
  std::atomic<uint64_t> gate{0}, before{0};
  ASSERT_EQ(api.writeValue64(streams[2].handle, address(before), 1), 0);
  ASSERT_EQ(api.waitValue64(streams[0].handle, address(gate), 1), 0);
  ASSERT_EQ(api.streamSynchronize(streams[2].handle), 0);
  EXPECT_EQ(before.load(), 1u);
  gate.store(1);
  ASSERT_EQ(api.streamSynchronize(streams[0].handle), 0);
}

}  // namespace
}  // namespace hetccl
