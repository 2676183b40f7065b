// What a plugin changes in the environment while it loads and inits is
// put back, and reported by name with both values.
#include "transport/net/environment_guard.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "support/scoped_env.h"

namespace hetccl {
namespace {

TEST(NetEnvironmentGuard, PutsBackWhatWasSetChangedAndRemoved) {
  ScopedEnv added("HETCCL_TEST_GUARD_ADDED", nullptr);
  ScopedEnv changed("HETCCL_TEST_GUARD_CHANGED", "before");
  ScopedEnv removed("HETCCL_TEST_GUARD_REMOVED", "kept");
  ScopedEnv untouched("HETCCL_TEST_GUARD_UNTOUCHED", "same");
  EnvironmentGuard guard;
  setenv("HETCCL_TEST_GUARD_ADDED", "new", 1);
  setenv("HETCCL_TEST_GUARD_CHANGED", "after", 1);
  unsetenv("HETCCL_TEST_GUARD_REMOVED");
  std::vector<EnvironmentChange> changes = guard.restore();

  EXPECT_EQ(getenv("HETCCL_TEST_GUARD_ADDED"), nullptr);
  EXPECT_STREQ(getenv("HETCCL_TEST_GUARD_CHANGED"), "before");
  EXPECT_STREQ(getenv("HETCCL_TEST_GUARD_REMOVED"), "kept");
  EXPECT_STREQ(getenv("HETCCL_TEST_GUARD_UNTOUCHED"), "same");
  ASSERT_EQ(changes.size(), 3u);
  EXPECT_EQ(describeChanges(changes),
            "HETCCL_TEST_GUARD_ADDED=new (was unset), "
            "HETCCL_TEST_GUARD_CHANGED=after (was before), "
            "HETCCL_TEST_GUARD_REMOVED unset (was kept)");
}

TEST(NetEnvironmentGuard, NothingChangedSaysNothing) {
  EnvironmentGuard guard;
  EXPECT_TRUE(guard.restore().empty());
  EXPECT_EQ(describeChanges({}), "");
}

}  // namespace
}  // namespace hetccl
