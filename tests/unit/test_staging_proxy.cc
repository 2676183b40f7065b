// The staging proxy's control words: a captured launch keeps one for as
// long as the communicator lives (a graph may replay it until then), and
// a capture past the last word fails with ncclInvalidUsage and says what
// to do, rather than sharing a word with another graph's launch.
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>

#include "engine/gpu/proxy/staging_proxy.h"
#include "runtime/host/emulated_device_module.h"
#include "util/abort_signal.h"

namespace hetccl {
namespace {

constexpr size_t kWords = 3;

TEST(StagingProxyWords, ACaptureBeyondTheLastWordFailsWithInvalidUsage) {
  StagingProxy proxy(
      std::make_shared<AbortSignal>(), /*timeoutSeconds=*/0,
      /*gateWord=*/nullptr,
      PinnedHostMemory(emulatedDeviceModule(), kWords * sizeof(uint64_t)),
      [](const Error&) {}, /*waiting=*/nullptr);
  std::set<uint64_t*> taken;
  for (size_t i = 0; i < kWords; ++i) taken.insert(proxy.takeControlWord());
  EXPECT_EQ(taken.size(), kWords) << "two captures share a control word";
  try {
    proxy.takeControlWord();
    FAIL() << "a capture got a word past the last one";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ncclInvalidUsage);
    EXPECT_NE(std::string(error.what()).find("at most 3 captured launches"),
              std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace hetccl
