// A GPU engine's staging streams (staging_streams.h): transfers take the
// pairs in turn, and a capture's end finds every stream that followed the
// engine's joined back into it.
#include <gtest/gtest.h>

#include <set>

#include "engine/gpu/proxy/staging_streams.h"
#include "runtime/host/emulated_device_module.h"

namespace hetccl {
namespace {

TEST(StagingStreams, TransfersTakeThePairsInTurn) {
  const DeviceModule& module = emulatedDeviceModule();
  DeviceStream engine(module);
  for (size_t pairs : {1, 3}) {
    StagingStreams copies(module, engine.handle(), pairs);
    EXPECT_EQ(copies.pairs(), pairs);
    std::vector<void*> ups, downs;
    for (size_t i = 0; i < 2 * pairs; ++i) {
      ups.push_back(copies.nextUp());
      downs.push_back(copies.nextDown());
    }
    for (size_t i = 0; i < pairs; ++i) {
      EXPECT_EQ(ups[i], ups[i + pairs]) << "the turn comes round again";
      EXPECT_EQ(downs[i], downs[i + pairs]);
    }
    std::set<void*> distinct(ups.begin(), ups.end());
    distinct.insert(downs.begin(), downs.end());
    distinct.insert(engine.handle());
    EXPECT_EQ(distinct.size(), 2 * pairs + 1) << "a stream of its own each";
  }
}

TEST(StagingStreams, NoneMeansOnePair) {
  const DeviceModule& module = emulatedDeviceModule();
  DeviceStream engine(module);
  StagingStreams copies(module, engine.handle(), 0);
  EXPECT_EQ(copies.pairs(), 1u);
}

// The engine's stream, joined with the staging streams that followed it,
// waits for what they were given: here a stream wait on a word of the
// test's, enqueued on the second up stream only.
TEST(StagingStreams, TheEnginesStreamWaitsForEveryStreamThatFollowedIt) {
  const DeviceModule& module = emulatedDeviceModule();
  const auto& api = module.api();
  DeviceStream engine(module);
  StagingStreams copies(module, engine.handle(), 2);
  copies.beginLaunch();
  void* first = copies.nextUp();
  void* second = copies.nextUp();
  copies.followEngine(first);
  copies.followEngine(second);
  uint64_t word = 0;
  ASSERT_EQ(api.waitValue64(second, &word, 1), 0);
  copies.joinEngine();
  int idle = 1;
  ASSERT_EQ(api.streamQuery(engine.handle(), &idle), 0);
  EXPECT_FALSE(idle) << "the engine's stream waits for the second up stream";
  EXPECT_FALSE(copies.idle());
  __atomic_store_n(&word, 1, __ATOMIC_RELEASE);
  ASSERT_EQ(api.streamSynchronize(engine.handle()), 0);
  copies.synchronize();
  EXPECT_TRUE(copies.idle());
}

}  // namespace
}  // namespace hetccl
