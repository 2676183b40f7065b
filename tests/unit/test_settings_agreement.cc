// Settings that must be the same on every rank: the declarations decide which,
// ranks that agree exchange nothing more, and ranks that differ all fail
// naming each variable, both values and the ranks.
#include "util/settings_agreement.h"

#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <string>

#include "core/all_params.h"
#include "core/settings.h"
#include "support/expect_error.h"
#include "support/in_process_oob.h"
#include "support/scoped_env.h"
#include "support/thread_ranks.h"

namespace hetccl {
namespace {

std::string valueOf(const Settings& settings, const ParamSpec& param) {
  for (const SettingValue& setting : settings.mustAgree)
    if (setting.param == &param) return setting.value;
  ADD_FAILURE() << param.name << " is not among mustAgree";
  return "";
}

void setValue(Settings& settings, const ParamSpec& param,
              const std::string& value) {
  for (SettingValue& setting : settings.mustAgree)
    if (setting.param == &param) setting.value = value;
}

TEST(SettingsAgreement, EverySameParameterIsComparedInItsCanonicalForm) {
  ScopedEnv chunk("HETCCL_SHM_CHUNK", "1M");
  ScopedEnv transport("HETCCL_TRANSPORT", nullptr);
  ScopedEnv direct("HETCCL_GPU_DIRECT", "0");
  const Settings settings = Settings::fromEnvironment();
  size_t same = 0;
  for (const ParamSpec* spec : allParams())
    same += spec->scope == ParamScope::Same ? 1 : 0;
  EXPECT_EQ(settings.mustAgree.size(), same);
  EXPECT_EQ(valueOf(settings, kShmChunk), "1048576");
  EXPECT_EQ(valueOf(settings, kShmP2pChunk), "262144");  // default
  EXPECT_EQ(valueOf(settings, kTransport), "auto");      // unset
  EXPECT_EQ(valueOf(settings, kGpuDirect), "0");
  // "1024K" and "1M" are one value.
  ScopedEnv sameChunk("HETCCL_SHM_CHUNK", "1024K");
  EXPECT_EQ(mustAgreeDigest(Settings::fromEnvironment().mustAgree),
            mustAgreeDigest(settings.mustAgree));
}

// Equal digests end the check at once: the other ranks never join an
// exchange (the world would time out if rank 0 waited for them).
TEST(SettingsAgreement, RanksThatAgreeExchangeNothing) {
  const Settings settings = Settings::fromEnvironment();
  const uint64_t digest = mustAgreeDigest(settings.mustAgree);
  InProcessWorld world(3);
  InProcessOob oob(world, 0);
  checkSettingsAgree(oob, settings.mustAgree, {digest, digest, digest});
}

TEST(SettingsAgreement, EveryRankFailsNamingEachDifference) {
  constexpr int kRanks = 3;
  std::vector<Settings> settings(kRanks, Settings::fromEnvironment());
  setValue(settings[0], kShmChunk, "524288");
  setValue(settings[1], kShmChunk, "1048576");
  setValue(settings[2], kShmChunk, "524288");
  setValue(settings[2], kShmP2pChunk, "1073741824");
  std::vector<uint64_t> digests;
  for (const Settings& s : settings)
    digests.push_back(mustAgreeDigest(s.mustAgree));
  InProcessWorld world(kRanks);
  std::mutex mutex;
  std::map<int, Error> errors;
  runRanks(kRanks, [&](int rank) {
    InProcessOob oob(world, rank);
    Error e = expectError(
        [&] { checkSettingsAgree(oob, settings[rank].mustAgree, digests); });
    std::lock_guard<std::mutex> lock(mutex);
    errors.emplace(rank, e);
  });
  ASSERT_EQ(errors.size(), size_t{kRanks});
  for (const auto& [rank, e] : errors) {
    EXPECT_EQ(e.code(), ncclInvalidUsage) << "rank " << rank;
    EXPECT_STREQ(e.what(),
                 "HETCCL_SHM_CHUNK differs: rank 0 has 524288, rank 1 has "
                 "1048576; HETCCL_SHM_P2P_CHUNK differs: rank 0 has 262144, "
                 "rank 2 has 1073741824: every rank of a communicator needs "
                 "the same value")
        << "rank " << rank;
  }
}

}  // namespace
}  // namespace hetccl
