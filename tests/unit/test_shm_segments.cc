// What every shared-memory user gets from the segment exchange besides the
// segments: names that say who made them, the removal of names whose maker
// is gone, and a refusal, before anything is created, of segments the host
// has no room for.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <string>

#include "domain/host/shm_world.h"
#include "shm/shm_names.h"
#include "shm/shm_room.h"
#include "support/expect_error.h"
#include "support/in_process_oob.h"
#include "support/thread_ranks.h"

namespace hetccl {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

// A pid that just existed and is gone: a child that exited and was reaped.
pid_t goneProcess() {
  pid_t child = fork();
  if (child == 0) _exit(0);
  EXPECT_GT(child, 0);
  int status = 0;
  waitpid(child, &status, 0);
  return child;
}

std::string nameFor(pid_t pid, uint64_t pidNamespace, const char* prefix) {
  return std::string(prefix) + "-" + std::to_string(pid) + "-" +
         std::to_string(pidNamespace) + "-0123456789abcdef";
}

bool exists(const std::string& name) {
  return access(("/dev/shm/" + name).c_str(), F_OK) == 0;
}

void createName(const std::string& name) {
  int fd = shm_open(("/" + name).c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  ASSERT_GE(fd, 0) << name;
  close(fd);
}

TEST(ShmSegments, NamesSayWhoMadeThem) {
  const std::string name = uniqueSegmentName("hetccl-link").substr(1);
  std::optional<SegmentCreator> creator = segmentCreator(name);
  ASSERT_TRUE(creator) << name;
  EXPECT_EQ(creator->pid, getpid());
  EXPECT_EQ(creator->pidNamespace, ownPidNamespace());
  EXPECT_NE(ownPidNamespace(), 0u);
  for (const char* other :
       {"hetccl-1234-0123456789abcdef", "hetccl-0-1-0123456789abcdef",
        "hetcclx-1-2-0123456789abcdef", "other-1-2-0123456789abcdef",
        "hetccl-1-2-0123456789ABCDEF", "hetccl--2-0123456789abcdef"})
    EXPECT_FALSE(segmentCreator(other)) << other;
}

// Only a name of this user, made in this pid namespace by a process that is
// gone, goes; a live maker's, another namespace's and a foreign name stay.
TEST(ShmSegments, OnlyNamesOfGoneMakersInThisNamespaceAreRemoved) {
  const pid_t gone = goneProcess();
  const uint64_t ns = ownPidNamespace();
  const std::string stale = nameFor(gone, ns, "hetccl");
  const std::string staleLink = nameFor(gone, ns, "hetccl-link");
  const std::string live = nameFor(getpid(), ns, "hetccl-gpu");
  const std::string otherNamespace = nameFor(gone, ns + 1, "hetccl");
  const std::string foreign = "hetcclx-" + std::to_string(gone) + "-" +
                              std::to_string(ns) + "-0123456789abcdef";
  for (const std::string& name :
       {stale, staleLink, live, otherNamespace, foreign})
    createName(name);
  // (Another test's exchange, run at the same time, may remove some first.)
  removeNamesOfGoneCreators();
  EXPECT_FALSE(exists(stale));
  EXPECT_FALSE(exists(staleLink));
  for (const std::string& name : {live, otherNamespace, foreign}) {
    EXPECT_TRUE(exists(name)) << name;
    shm_unlink(("/" + name).c_str());
  }
}

// The next exchange on the host removes them (here: a host domain's).
TEST(ShmSegments, AnExchangeRemovesNamesThatDeadRanksLeft) {
  const std::string stale = nameFor(goneProcess(), ownPidNamespace(), "hetccl");
  createName(stale);
  InProcessWorld world(2);
  runRanks(2, [&](int rank) {
    InProcessOob oob(world, rank);
    ShmWorld shm(oob, ShmSettings::fromEnvironment(), /*timeoutSeconds=*/0,
                 std::make_shared<AbortSignal>(), nullptr);
  });
  EXPECT_FALSE(exists(stale));
}

TEST(ShmSegments, RoomIsCountedOverTheRanksOfOneDevShm) {
  const ShmRoom room{7, 20 * kGiB, 30 * kGiB};
  const ShmRoom elsewhere{8, 20 * kGiB, 30 * kGiB};
  // 3 x 8 GiB here (24 > 20 free); the rank elsewhere is not counted.
  std::vector<ShmDemand> demands = {
      {8 * kGiB, room}, {8 * kGiB, room}, {0, room}, {8 * kGiB, elsewhere}};
  demands.push_back({8 * kGiB, room});
  Error e = expectError([&] {
    checkShmRoom(demands, 1, "host domain", "HETCCL_SHM_P2P_CHUNK=1G");
  });
  EXPECT_EQ(e.code(), ncclSystemError);
  EXPECT_STREQ(e.what(),
               "host domain: the 3 rank(s) sharing this host's /dev/shm would "
               "need 24 GiB of shared memory together (rank 1: 8 GiB for "
               "HETCCL_SHM_P2P_CHUNK=1G), but /dev/shm has 20 GiB free and "
               "the host 30 GiB of memory available (MemAvailable); lower "
               "those settings");
  // A rank that creates nothing, and a host with room, pass.
  checkShmRoom(demands, 2, "host domain", "");
  checkShmRoom(demands, 3, "host domain", "");
  // Memory can be the limit too.
  demands = {{8 * kGiB, {7, 100 * kGiB, 12 * kGiB}}, {8 * kGiB, room}};
  EXPECT_EQ(expectError([&] { checkShmRoom(demands, 0, "x", ""); }).code(),
            ncclSystemError);
}

// HETCCL_SHM_P2P_CHUNK=1G (inside its range) for 64 ranks asks for 64 x
// 132 GiB: more than any host has. Every rank refuses before any segment
// exists, naming the settings.
TEST(ShmSegments, SegmentsTooLargeForTheHostFailOnEveryRankBeforeCreation) {
  constexpr int kRanks = 64;
  ShmSettings settings = ShmSettings::fromEnvironment();
  settings.chunkBytes = kGiB;
  settings.p2pChunkBytes = kGiB;
  InProcessWorld world(kRanks);
  std::mutex mutex;
  std::map<int, Error> errors;
  runRanks(kRanks, [&](int rank) {
    InProcessOob oob(world, rank);
    Error e = expectError([&] {
      ShmWorld shm(oob, settings, /*timeoutSeconds=*/0,
                   std::make_shared<AbortSignal>(), nullptr);
    });
    std::lock_guard<std::mutex> lock(mutex);
    errors.emplace(rank, e);
  });
  ASSERT_EQ(errors.size(), size_t{kRanks});
  for (const auto& [rank, e] : errors) {
    EXPECT_EQ(e.code(), ncclSystemError) << "rank " << rank;
    const std::string message = e.what();
    for (const char* part :
         {"the 64 rank(s) sharing this host's /dev/shm would need 8.3 TiB of "
          "shared memory together",
          "132 GiB for HETCCL_SHM_CHUNK=1G and HETCCL_SHM_P2P_CHUNK=1G with "
          "64 ranks"})
      EXPECT_NE(message.find(part), std::string::npos)
          << "rank " << rank << ": " << message;
  }
}

}  // namespace
}  // namespace hetccl
