// Set-up steps that fail on some ranks only: every rank learns, in the
// same exchange, that the step failed, where and why, and nobody waits
// for a rank that gave up.
#include "util/collective_setup.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <string>

#include "support/in_process_oob.h"
#include "support/thread_ranks.h"

namespace hetccl {
namespace {

struct Outcome {
  bool threw = false;
  ncclResult_t code = ncclSuccess;
  std::string message;
};

// Each rank runs agreeOnSuccess with its own failure (none where
// `failures` has no entry); returns what each rank saw.
std::map<int, Outcome> agree(int nranks, const std::map<int, Error>& failures) {
  InProcessWorld world(nranks);
  std::mutex mutex;
  std::map<int, Outcome> seen;
  runRanks(nranks, [&](int rank) {
    InProcessOob oob(world, rank);
    std::optional<Error> failure;
    auto it = failures.find(rank);
    if (it != failures.end()) failure = it->second;
    Outcome outcome;
    try {
      agreeOnSuccess(oob, failure, "test domain", "loading its library");
    } catch (const Error& e) {
      outcome = {true, e.code(), e.what()};
    }
    std::lock_guard<std::mutex> lock(mutex);
    seen[rank] = outcome;
  });
  return seen;
}

std::string hostName() {
  char host[64] = {0};
  gethostname(host, sizeof(host) - 1);
  return host;
}

TEST(AgreeOnSuccess, NobodyThrowsWhenEveryRankSucceeded) {
  for (auto& [rank, outcome] : agree(3, {}))
    EXPECT_FALSE(outcome.threw) << "rank " << rank << ": " << outcome.message;
}

TEST(AgreeOnSuccess, EveryRankNamesTheRankThatFailedItsHostAndWhy) {
  const std::string why = "cannot load libexample.so.2: no such file";
  auto seen = agree(3, {{2, Error(ncclSystemError, why)}});
  EXPECT_EQ(seen[2].code, ncclSystemError);
  EXPECT_EQ(seen[2].message, why);
  for (int rank : {0, 1}) {
    EXPECT_TRUE(seen[rank].threw) << "rank " << rank;
    EXPECT_EQ(seen[rank].code, ncclRemoteError) << "rank " << rank;
    EXPECT_EQ(seen[rank].message,
              "test domain: rank 2 (host " + hostName() +
                  ") failed while loading its library: " + why);
  }
}

// Rank 1 failed only because rank 2 did (as the other ranks of a domain do
// when one of them cannot load the library): the others name rank 2.
TEST(AgreeOnSuccess, TheRankThatFailedOnItsOwnIsNamedFirst) {
  const std::string why = "cannot load libexample.so.2";
  auto seen =
      agree(4, {{1, Error(ncclRemoteError, "inner: rank 2 failed: " + why)},
                {2, Error(ncclInvalidUsage, why)}});
  for (int rank : {0, 3}) {
    EXPECT_EQ(seen[rank].code, ncclRemoteError) << "rank " << rank;
    EXPECT_NE(seen[rank].message.find("rank 2 (host"), std::string::npos)
        << seen[rank].message;
    EXPECT_NE(seen[rank].message.find(why), std::string::npos)
        << seen[rank].message;
  }
  EXPECT_EQ(seen[2].code, ncclInvalidUsage);
}

// A long message (a library path, the loader's words) reaches the others
// whole.
TEST(AgreeOnSuccess, ALongReasonArrivesWhole) {
  const std::string why =
      "NCCL domain: cannot load HETCCL_NCCL_LIBRARY=" + std::string(200, 'x') +
      "/libnccl.so.2: cannot open shared object file: No such file";
  auto seen = agree(2, {{1, Error(ncclSystemError, why)}});
  EXPECT_NE(seen[0].message.find(why), std::string::npos) << seen[0].message;
}

}  // namespace
}  // namespace hetccl
