// Soak: rounds of random work on 4 ranks in 2 domains until a time budget
// runs out. Each round is a few collectives (every kind, type and op,
// PreMulSum included, 0 to SOAK_MAX_MB, in place or not, any root, the NULL
// stream or a host stream, grouped or not) or a send/receive ring in a
// group. Every output is checked; every rank must hold the same shared
// outputs; and the process must not grow: descriptors, threads and
// /dev/shm segments the same after the last round as after the first
// ones, heap in use and RSS within a small margin (not under
// AddressSanitizer, whose quarantine holds freed memory).
//
// SOAK_SECONDS is each layout's budget; SOAK_SEED (default 1) picks the
// work, which depends only on the seed and the round number, so a failure
// names the round that reproduces it; SOAK_MAX_MB caps an operation's
// size. Their defaults are CI's short form, set by the build (30 s, 15 s
// with the sanitizers, and 16 MB: on 2 cores the warm-up and warm rounds at
// 64 MB alone take over a minute); bench/soak.sh runs the long one.
#include <gtest/gtest.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "harness/check.h"
#include "harness/collective_case.h"
#include "harness/data.h"
#include "harness/domains.h"
#include "harness/guarded_buffer.h"
#include "harness/nccl_handles.h"
#include "harness/run_ranks.h"
#include "hetccl.h"
#include "kit/dtype.h"

namespace hetccl::mp {
namespace {

constexpr int kRanks = 4;
// Rounds before the resources are first counted, after every collective
// ran once at the largest size: the buffers and threads that the library
// keeps for the life of a communicator (scratch for a chunk of each plan)
// exist by then.
constexpr uint64_t kWarmRounds = 8;
// Heap in use may differ by what the allocator and the library's caches
// hold at either moment; a leak of a few bytes per operation over a
// thousand rounds shows above this.
constexpr size_t kHeapSlackBytes = 8u << 20;
// RSS is measured after malloc_trim, which hands freed heap back: what is
// left is what the process uses, plus fragmentation.
constexpr size_t kRssSlackBytes = 64u << 20;

double envNumber(const char* name, double fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' ? std::atof(value) : fallback;
}

// The largest operation, at least 8 MiB + 1.
size_t maxBytes() {
  const double megabytes = envNumber("SOAK_MAX_MB", HETCCL_SOAK_MAX_MB);
  return std::max<size_t>(static_cast<size_t>(megabytes) << 20, (8u << 20) + 1);
}

double nowSeconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A deterministic stream of choices for one round.
class Choices {
 public:
  Choices(uint64_t seed, uint64_t round) : seed_(seed), round_(round) {}
  uint64_t next() { return mixBits(seed_, round_, draws_++); }
  size_t below(size_t n) { return static_cast<size_t>(next() % n); }
  bool chance(int percent) { return below(100) < static_cast<size_t>(percent); }
  // Mostly small, sometimes large: 0 to 4 KiB (70%), up to 8 MiB spread
  // evenly over the powers of two (28%), 8 MiB to maxBytes() (2%; on 2
  // cores such a round takes seconds at 64 MiB, most of them checking).
  size_t bytes() {
    const size_t kind = below(100);
    if (kind < 70) return below(4097);
    if (kind < 98) return size_t{1} << (12 + below(11)) | below(4096);
    return (8u << 20) + below(maxBytes() - (8u << 20) + 1);
  }

 private:
  uint64_t seed_, round_, draws_ = 0;
};

CollectiveCase randomCase(Choices& choices, bool onStream, uint64_t seed) {
  CollectiveCase c;
  c.collective = allCollectives()[choices.below(allCollectives().size())];
  const auto& types = kit::allDataTypes();
  c.type = types[choices.below(types.size())].nccl;
  c.op = allTestOps()[choices.below(allTestOps().size())];
  // Collectives whose count is per rank move nranks times as much.
  size_t elements = choices.bytes() / kit::dataTypeOf(c.type).size;
  const bool perRankCount = isSplitAcrossRanks(c.collective);
  c.count = perRankCount ? elements / kRanks : elements;
  c.inPlace = supportsInPlace(c.collective) && choices.chance(50);
  c.root = static_cast<int>(choices.below(kRanks));
  c.onStream = onStream;
  c.seed = seed;
  return c;
}

// What the process holds; compared between two moments.
struct Resources {
  size_t fds = 0;
  size_t threads = 0;
  size_t shmSegments = 0;  // /dev/shm names holding this process's pid
  size_t heapBytes = 0;    // malloc'ed and not freed
  size_t rssBytes = 0;

  static Resources now() {
    namespace fs = std::filesystem;
    Resources r;
    for (const auto& entry : fs::directory_iterator("/proc/self/fd")) {
      (void)entry;
      ++r.fds;
    }
    for (const auto& entry : fs::directory_iterator("/proc/self/task")) {
      (void)entry;
      ++r.threads;
    }
    const std::string mark = "-" + std::to_string(getpid()) + "-";
    for (const auto& entry : fs::directory_iterator("/dev/shm"))
      if (entry.path().filename().string().find(mark) != std::string::npos)
        ++r.shmSegments;
    malloc_trim(0);
    const struct mallinfo2 heap = mallinfo2();
    r.heapBytes = heap.uordblks + heap.hblkhd;
    long pages = 0, resident = 0;
    if (FILE* statm = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(statm, "%ld %ld", &pages, &resident) != 2) resident = 0;
      std::fclose(statm);
    }
    r.rssBytes = static_cast<size_t>(resident) *
                 static_cast<size_t>(sysconf(_SC_PAGESIZE));
    return r;
  }

  std::string describe() const {
    return std::to_string(fds) + " fds, " + std::to_string(threads) +
           " threads, " + std::to_string(shmSegments) + " shm segments, " +
           std::to_string(heapBytes >> 10) + " KiB heap, " +
           std::to_string(rssBytes >> 20) + " MiB RSS";
  }
};

// AddressSanitizer keeps freed memory in quarantine (up to 256 MB) and has
// its own heap: neither its heap nor RSS says anything about leaks there
// (LeakSanitizer covers those). With operations of 16 MB its RSS rose by
// 76 MB over a 15 s slice.
bool memoryIsMeasurable() {
#if defined(__SANITIZE_ADDRESS__)
  return false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return false;
#else
  return true;
#endif
#else
  return true;
#endif
}

struct Tally {
  uint64_t rounds = 0;
  uint64_t operations = 0;
  uint64_t bytes = 0;
};

// A few collectives, grouped or one after another, all on the NULL stream
// or all on the host stream; then every output is checked.
void collectivesRound(Choices& choices, uint64_t seed, uint64_t round,
                      ncclComm_t comm, const HostStream& stream,
                      const RankContext& ctx, Tally& tally,
                      std::vector<uint64_t>& hashes) {
  const bool onStream = choices.chance(50);
  const bool grouped = choices.chance(40);
  const size_t count = 1 + choices.below(4);
  std::vector<CollectiveCase> cases;
  for (size_t i = 0; i < count; ++i)
    cases.push_back(randomCase(choices, onStream, mixBits(seed, round, i)));
  std::vector<std::unique_ptr<CollectiveRun>> runs;
  cudaStream_t s = onStream ? stream.get() : nullptr;
  if (grouped) MP_CHECK_NCCL(ncclGroupStart());
  for (const CollectiveCase& c : cases) {
    runs.push_back(
        std::make_unique<CollectiveRun>(c, comm, ctx.rank(), ctx.nranks()));
    MP_CHECK_NCCL(runs.back()->issue(s))
        << "round " << round << ": " << c.describe();
  }
  if (grouped) MP_CHECK_NCCL(ncclGroupEnd()) << "round " << round;
  if (onStream) stream.synchronize();
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string problem = runs[i]->verify();
    MP_CHECK(problem.empty())
        << "round " << round << " (seed " << seed
        << "): " << cases[i].describe() << ": " << problem;
    hashes.push_back(runs[i]->sharedOutputHash());
    tally.bytes += cases[i].count * kit::dataTypeOf(cases[i].type).size;
  }
  tally.operations += count;
}

// A ring of send/receive in one group: every rank sends to the next and
// receives from the one before, the same size all around.
void ringRound(Choices& choices, uint64_t seed, uint64_t round, ncclComm_t comm,
               const RankContext& ctx, Tally& tally) {
  const size_t bytes = choices.bytes();
  const int next = (ctx.rank() + 1) % ctx.nranks();
  const int previous = (ctx.rank() + ctx.nranks() - 1) % ctx.nranks();
  const uint64_t patternSeed = mixBits(seed, round, 0xface);
  GuardedBuffer send(bytes), recv(bytes);
  fillPatternBytes(patternSeed, ctx.rank(), 0, bytes, send.data());
  MP_CHECK_NCCL(ncclGroupStart());
  MP_CHECK_NCCL(ncclSend(send.data(), bytes, ncclUint8, next, comm, nullptr));
  MP_CHECK_NCCL(
      ncclRecv(recv.data(), bytes, ncclUint8, previous, comm, nullptr));
  MP_CHECK_NCCL(ncclGroupEnd()) << "round " << round;
  const std::string problem =
      checkPatternBytes(patternSeed, previous, 0, bytes, recv.data());
  MP_CHECK(problem.empty()) << "round " << round << " (seed " << seed
                            << "): ring of " << bytes << " bytes: " << problem;
  MP_CHECK(send.guardsIntact() && recv.guardsIntact())
      << "round " << round << ": ring wrote past a buffer";
  tally.operations += 2;
  tally.bytes += bytes;
}

// Every collective once at the largest size, in place and not, the rooted
// ones from every root, and send/receive rings: what the library keeps at
// its largest. Unchecked (the
// rounds check); zeros, so that no value can overflow.
void warmUpAtTheLargestSize(ncclComm_t comm, const RankContext& ctx) {
  const size_t count = maxBytes() / sizeof(float);
  std::vector<float> send(count), recv(count);
  float* s = send.data();
  float* r = recv.data();
  const size_t share = count / kRanks;
  const ncclDataType_t f32 = ncclFloat32;
  for (bool inPlace : {false, true}) {
    float* out = inPlace ? s : r;
    float* slot = s + ctx.rank() * share;  // this rank's block, in place
    MP_CHECK_NCCL(ncclAllReduce(s, out, count, f32, ncclSum, comm, nullptr));
    MP_CHECK_NCCL(ncclReduceScatter(s, inPlace ? slot : r, share, f32, ncclSum,
                                    comm, nullptr));
    MP_CHECK_NCCL(
        ncclAllGather(inPlace ? slot : s, out, share, f32, comm, nullptr));
    // Every rank as the root: a root keeps more (a reduce's root holds
    // the other domains' partials), which a rank first a root in the
    // rounds would otherwise add then.
    for (int root = 0; root < kRanks; ++root) {
      MP_CHECK_NCCL(ncclBroadcast(s, out, count, f32, root, comm, nullptr));
      MP_CHECK_NCCL(
          ncclReduce(s, out, count, f32, ncclSum, root, comm, nullptr));
      MP_CHECK_NCCL(
          ncclGather(inPlace ? slot : s, out, share, f32, root, comm, nullptr));
      MP_CHECK_NCCL(
          ncclScatter(s, inPlace ? slot : r, share, f32, root, comm, nullptr));
    }
  }
  MP_CHECK_NCCL(ncclAlltoAll(s, r, share, f32, comm, nullptr));
  // A send/receive ring at every distance: with a domain per rank, every
  // link carries the largest message each way, as the rounds' rings may.
  for (int distance = 1; distance < kRanks; ++distance) {
    const int next = (ctx.rank() + distance) % kRanks;
    const int previous = (ctx.rank() + kRanks - distance) % kRanks;
    MP_CHECK_NCCL(ncclGroupStart());
    MP_CHECK_NCCL(ncclSend(s, count, f32, next, comm, nullptr));
    MP_CHECK_NCCL(ncclRecv(r, count, f32, previous, comm, nullptr));
    MP_CHECK_NCCL(ncclGroupEnd());
  }
}

// Whether any rank is out of time; all ranks stop after the same round.
bool anyRankDone(ncclComm_t comm, bool done) {
  int flag = done ? 1 : 0;
  MP_CHECK_NCCL(
      ncclAllReduce(&flag, &flag, 1, ncclInt32, ncclMax, comm, nullptr));
  return flag != 0;
}

void checkNoGrowth(const Resources& warm, const Resources& end,
                   const RankContext& ctx) {
  MP_CHECK(end.fds == warm.fds && end.threads == warm.threads &&
           end.shmSegments == warm.shmSegments)
      << "rank " << ctx.rank() << " grew: after warm-up " << warm.describe()
      << "; at the end " << end.describe();
  if (!memoryIsMeasurable()) return;
  MP_CHECK(end.heapBytes <= warm.heapBytes + kHeapSlackBytes)
      << "rank " << ctx.rank() << "'s heap grew: after warm-up "
      << warm.describe() << "; at the end " << end.describe();
  MP_CHECK(end.rssBytes <= warm.rssBytes + kRssSlackBytes)
      << "rank " << ctx.rank() << "'s RSS grew: after warm-up "
      << warm.describe() << "; at the end " << end.describe();
}

void soak(RankContext& ctx, const DomainLayout& layout) {
  const double budget = envNumber("SOAK_SECONDS", HETCCL_SOAK_SECONDS);
  const auto seed = static_cast<uint64_t>(envNumber("SOAK_SEED", 1));
  Comm comm(ctx.initComm());
  checkDomainCount(comm.get(), layout.count());
  HostStream stream;
  Tally tally;
  std::vector<uint64_t> hashes;
  warmUpAtTheLargestSize(comm.get(), ctx);
  Resources warm;
  const double start = nowSeconds();
  for (uint64_t round = 0;; ++round) {
    if (round == kWarmRounds) warm = Resources::now();
    Choices choices(seed, round);
    if (choices.chance(15))
      ringRound(choices, seed, round, comm.get(), ctx, tally);
    else
      collectivesRound(choices, seed, round, comm.get(), stream, ctx, tally,
                       hashes);
    tally.rounds = round + 1;
    const bool outOfTime = nowSeconds() - start > budget;
    if (anyRankDone(comm.get(), outOfTime) && round >= kWarmRounds) break;
  }
  const Resources end = Resources::now();
  ctx.checkSameOnAllRanks(hashes, [&](size_t i) {
    return "shared output " + std::to_string(i) + " (seed " +
           std::to_string(seed) + ")";
  });
  checkNoGrowth(warm, end, ctx);
  if (ctx.rank() == 0)
    std::printf(
        "soak %s seed %llu: %llu rounds, %llu operations, %.1f MB, %zu "
        "shared outputs equal on all ranks, 0 wrong, in %.1f s\n"
        "  rank 0 after %llu rounds: %s\n  rank 0 at the end: %s\n",
        layout.name().c_str(), static_cast<unsigned long long>(seed),
        static_cast<unsigned long long>(tally.rounds),
        static_cast<unsigned long long>(tally.operations), tally.bytes / 1e6,
        hashes.size(), nowSeconds() - start,
        static_cast<unsigned long long>(kWarmRounds), warm.describe().c_str(),
        end.describe().c_str());
  comm.destroy();
}

class Soak : public ::testing::TestWithParam<DomainLayout> {};

TEST_P(Soak, RandomWorkStaysCorrectAndDoesNotGrow) {
  const DomainLayout layout = GetParam();
  RunOptions options;
  options.timeoutSeconds = static_cast<int>(
      envNumber("SOAK_SECONDS", HETCCL_SOAK_SECONDS) * 2 + 240);
  layout.applyTo(&options);
  runRanks(
      kRanks, [&](RankContext& ctx) { soak(ctx, layout); }, options);
}

// Every other launch as a graph's replay (its script stays, as a graph's
// does), each rank its own domain, as a capture needs. 4 MB chunks: the GPU
// engine's scratch is 2 x (domains + 2) chunks, 192 MB at the default 16 MB
// with 4 domains, which the rounds would first touch long after warm-up.
DomainLayout capturesInFourDomains() {
  DomainLayout layout = emulatedCapturesOverTcp({0, 1, 2, 3});
  layout.env["HETCCL_CHUNK"] = "4M";
  return layout;
}

INSTANTIATE_TEST_SUITE_P(
    Mp, Soak,
    ::testing::Values(domainsByLabel({0, 0, 1, 1}),
                      emulatedGpuDomains({0, 0, 1, 1}),
                      capturesInFourDomains()),
    [](const ::testing::TestParamInfo<DomainLayout>& info) {
      return info.param.name();
    });

}  // namespace
}  // namespace hetccl::mp
