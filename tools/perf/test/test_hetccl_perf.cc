// Tests of hetccl-perf's own logic (the element types are the kit's, tested
// in tools/kit/test): the exactness of the
// input patterns under reductions done in the element type, the nccl-tests
// shapes, the options, the result check against a reference collective, and
// the NCCL API table (--nccl-library).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "kit/dtype.h"
#include "perf/buffer_check.h"
#include "perf/collectives.h"
#include "perf/device.h"
#include "perf/nccl_api.h"
#include "perf/options.h"
#include "perf/perf_error.h"
#include "perf/rank_env.h"
#include "perf/reduce_op.h"
#include "perf/value_pattern.h"

namespace hetccl {
namespace perf {
namespace {

const kit::DataType& type(const char* name) { return *kit::findDataType(name); }

double roundToType(const kit::DataType& t, double value) {
  char bytes[8];
  kit::encodeValue(t, value, bytes);
  return kit::decodeValue(t, bytes);
}

// Reduces the ranks' inputs the way a library might: in the element type,
// rounding after every step, in forward or reverse rank order, with avg as a
// premultiplication by 1/n for floats.
double typedReduction(const ValuePattern& pattern, const kit::DataType& t,
                      OpKind op, int nranks, size_t index, bool reverse) {
  double accumulator = 0;
  for (int step = 0; step < nranks; ++step) {
    const int rank = reverse ? nranks - 1 - step : step;
    double x = pattern.value(rank, index);
    if (op == OpKind::kPreMulSum) x = roundToType(t, x * kPreMulScalar);
    if (op == OpKind::kAvg && t.isFloat) {
      x = roundToType(t, x * roundToType(t, 1.0 / nranks));
    }
    if (step == 0) {
      accumulator = x;
    } else if (op == OpKind::kProd) {
      accumulator *= x;
    } else if (op == OpKind::kMax) {
      accumulator = std::max(accumulator, x);
    } else if (op == OpKind::kMin) {
      accumulator = std::min(accumulator, x);
    } else {
      accumulator += x;
    }
    accumulator = roundToType(t, accumulator);
  }
  if (op == OpKind::kAvg && !t.isFloat) {
    accumulator = std::trunc(accumulator / nranks);
  }
  return accumulator;
}

TEST(ValuePattern, ReductionsInTheElementTypeAreExact) {
  for (const kit::DataType& t : kit::allDataTypes()) {
    for (const ReduceOp& op : allReduceOps()) {
      for (int nranks : {1, 2, 3, 4, 7, 8, 9, 16, 17, 33, 64}) {
        const ValuePattern pattern(t, &op, nranks, 1234);
        for (size_t index = 0; index < 300; ++index) {
          const Expected expected = pattern.reduced(index);
          for (bool reverse : {false, true}) {
            const double got =
                typedReduction(pattern, t, op.kind, nranks, index, reverse);
            ASSERT_TRUE(ValuePattern::matches(got, expected))
                << t.name << " " << op.name << " n=" << nranks << " index "
                << index << ": got " << got << ", expected " << expected.value
                << " +- " << expected.tolerance;
          }
        }
      }
    }
  }
}

TEST(ValuePattern, InputsVaryAndStayInRange) {
  for (const kit::DataType& t : kit::allDataTypes()) {
    for (const ReduceOp* op : {findReduceOp("sum"), findReduceOp("prod"),
                               static_cast<const ReduceOp*>(nullptr)}) {
      const ValuePattern pattern(t, op, 4, 99);
      std::set<double> distinct;
      for (size_t index = 0; index < 1000; ++index) {
        const double x = pattern.value(1, index);
        EXPECT_EQ(roundToType(t, x), x) << t.name;
        if (!t.isSigned) {
          EXPECT_GE(x, 0) << t.name;
        }
        distinct.insert(x);
      }
      // Products use +-1 and +-2 only (1 and 2 for unsigned types).
      const bool product = op && op->kind == OpKind::kProd;
      EXPECT_GE(distinct.size(), product && !t.isSigned ? 2u : 3u) << t.name;
    }
  }
}

TEST(ValuePattern, SeedsAndRanksGiveDifferentData) {
  const kit::DataType& t = type("float32");
  const ValuePattern a(t, nullptr, 4, 1);
  const ValuePattern b(t, nullptr, 4, 2);
  int differentSeed = 0;
  int differentRank = 0;
  for (size_t index = 0; index < 100; ++index) {
    differentSeed += a.value(0, index) != b.value(0, index);
    differentRank += a.value(0, index) != a.value(1, index);
  }
  EXPECT_GT(differentSeed, 90);
  EXPECT_GT(differentRank, 90);
}

TEST(ValuePattern, AvgToleranceRejectsWrongValues) {
  const ValuePattern pattern(type("float32"), findReduceOp("avg"), 4, 7);
  for (size_t index = 0; index < 100; ++index) {
    const Expected expected = pattern.reduced(index);
    EXPECT_TRUE(ValuePattern::matches(expected.value, expected));
    EXPECT_FALSE(ValuePattern::matches(expected.value + 0.25, expected));
    EXPECT_FALSE(ValuePattern::matches(NAN, expected));
  }
}

TEST(Collectives, NcclTestsShapes) {
  const Shape gather = shapeFor(CollKind::kAllGather, 1000, 4, 4);
  EXPECT_EQ(gather.callCount, 62u);
  EXPECT_EQ(gather.count, 248u);
  EXPECT_EQ(gather.bytes, 992u);
  EXPECT_EQ(gather.sendCount, 62u);
  EXPECT_EQ(gather.recvCount, 248u);
  const Shape scatter = shapeFor(CollKind::kReduceScatter, 1000, 4, 4);
  EXPECT_EQ(scatter.sendCount, 248u);
  EXPECT_EQ(scatter.recvCount, 62u);
  const Shape exchange = shapeFor(CollKind::kAlltoAll, 1000, 4, 4);
  EXPECT_EQ(exchange.callCount, 62u);
  EXPECT_EQ(exchange.sendCount, 248u);
  EXPECT_EQ(exchange.recvCount, 248u);
  const Shape reduce = shapeFor(CollKind::kAllReduce, 1000, 4, 4);
  EXPECT_EQ(reduce.count, 250u);
  EXPECT_EQ(reduce.callCount, 250u);
  EXPECT_EQ(shapeFor(CollKind::kAllGather, 8, 4, 4).count, 0u);
  const Shape toRoot = shapeFor(CollKind::kGather, 1000, 4, 4);
  EXPECT_EQ(toRoot.sendCount, 62u);
  EXPECT_EQ(toRoot.recvCount, 248u);
  const Shape fromRoot = shapeFor(CollKind::kScatter, 1000, 4, 4);
  EXPECT_EQ(fromRoot.sendCount, 248u);
  EXPECT_EQ(fromRoot.recvCount, 62u);
}

TEST(Collectives, BusBandwidthFactors) {
  EXPECT_DOUBLE_EQ(busBandwidthFactor(CollKind::kAllReduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(CollKind::kAllGather, 4), 0.75);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(CollKind::kReduceScatter, 8), 0.875);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(CollKind::kAlltoAll, 2), 0.5);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(CollKind::kBroadcast, 4), 1);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(CollKind::kReduce, 4), 1);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(CollKind::kSendRecv, 4), 1);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(CollKind::kGather, 4), 0.75);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(CollKind::kScatter, 2), 0.5);
}

TEST(Collectives, InPlaceLayoutsFollowNccl) {
  char buffer[4096];
  char other[4096];
  const Shape shape = shapeFor(CollKind::kAllGather, 1024, 4, 4);
  const CallBuffers gather =
      callBuffers(CollKind::kAllGather, true, other, buffer, shape, 2, 4);
  EXPECT_EQ(gather.recv, buffer);
  EXPECT_EQ(gather.send, buffer + 2 * 64 * 4);
  const CallBuffers scatter =
      callBuffers(CollKind::kReduceScatter, true, other, buffer, shape, 3, 4);
  EXPECT_EQ(scatter.send, buffer);
  EXPECT_EQ(scatter.recv, buffer + 3 * 64 * 4);
  const CallBuffers toRoot =
      callBuffers(CollKind::kGather, true, other, buffer, shape, 1, 4);
  EXPECT_EQ(toRoot.recv, buffer);
  EXPECT_EQ(toRoot.send, buffer + 64 * 4);
  const CallBuffers fromRoot =
      callBuffers(CollKind::kScatter, true, other, buffer, shape, 1, 4);
  EXPECT_EQ(fromRoot.send, buffer);
  EXPECT_EQ(fromRoot.recv, buffer + 64 * 4);
  const CallBuffers out =
      callBuffers(CollKind::kAllReduce, false, other, buffer, shape, 1, 4);
  EXPECT_EQ(out.send, other);
  EXPECT_EQ(out.recv, buffer);
}

std::vector<std::string> words(std::initializer_list<const char*> list) {
  return std::vector<std::string>(list.begin(), list.end());
}

Options parse(std::vector<std::string> arguments) {
  arguments.insert(arguments.begin(), "hetccl-perf");
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(&argument[0]);
  return parseOptions(static_cast<int>(argv.size()), argv.data());
}

TEST(Options, Defaults) {
  const Options options = parse({});
  ASSERT_EQ(options.collectives.size(), 1u);
  EXPECT_STREQ(options.collectives[0]->name, "allreduce");
  EXPECT_STREQ(options.dataTypes[0]->name, "float32");
  EXPECT_STREQ(options.ops[0]->name, "sum");
  EXPECT_EQ(options.checkIters, 1);
  EXPECT_EQ(options.warmupIters, 5);
  EXPECT_EQ(options.iters, 20);
  EXPECT_EQ(options.average, TimeAverage::kMean);
}

TEST(Options, CheckOrCollectiveAfterC) {
  EXPECT_STREQ(parse(words({"-c", "allgather"})).collectives[0]->name,
               "allgather");
  EXPECT_EQ(parse(words({"-c", "0"})).checkIters, 0);
  EXPECT_EQ(parse(words({"-c0"})).checkIters, 0);
  EXPECT_EQ(parse(words({"--check", "-b", "1K"})).checkIters, 1);
  EXPECT_EQ(parse(words({"--check", "3"})).checkIters, 3);
  EXPECT_EQ(parse(words({"--check=0"})).checkIters, 0);
  EXPECT_EQ(parse(words({"-x", "all"})).collectives.size(),
            allCollectives().size());
  EXPECT_EQ(parse(words({"--coll", "bcast,a2a"})).collectives.size(), 2u);
}

TEST(Options, ScriptStyleCommandLine) {
  const Options options = parse(words(
      {"-np", "4",  "-c", "allreduce", "-b",      "1K",     "-e",
       "64M", "-f", "4",  "-d",        "float32", "-o",     "sum",
       "-w",  "2",  "-n", "7",         "--check", "--json", "/tmp/x.json"}));
  EXPECT_EQ(options.localRanks, 4);
  EXPECT_EQ(options.threadsPerProcess, 1);
  EXPECT_EQ(parse(words({"-t", "3"})).threadsPerProcess, 3);
  EXPECT_EQ(parse(words({"--nthreads=2", "-g", "1"})).threadsPerProcess, 2);
  EXPECT_EQ(options.minBytes, 1024u);
  EXPECT_EQ(options.maxBytes, size_t{64} << 20);
  EXPECT_EQ(options.stepFactor, 4);
  EXPECT_EQ(options.warmupIters, 2);
  EXPECT_EQ(options.iters, 7);
  EXPECT_EQ(options.checkIters, 1);
  EXPECT_EQ(options.jsonPath, "/tmp/x.json");
}

TEST(Options, ListsAndFlags) {
  const Options options =
      parse(words({"-d", "float,bf16", "-o", "all", "-z", "-a", "3",
                   "--placement", "in", "-D", "split:2", "--timeout=9.5"}));
  EXPECT_EQ(options.dataTypes.size(), 2u);
  EXPECT_EQ(options.ops.size(), allReduceOps().size());
  EXPECT_TRUE(options.blocking);
  EXPECT_EQ(options.average, TimeAverage::kMax);
  EXPECT_FALSE(options.runOutOfPlace);
  EXPECT_TRUE(options.runInPlace);
  EXPECT_TRUE(options.domainsGiven);
  EXPECT_EQ(options.domains, "split:2");
  EXPECT_DOUBLE_EQ(options.timeoutSec, 9.5);
  EXPECT_FALSE(parse(words({"-z", "0"})).blocking);
}

TEST(Options, Errors) {
  for (const auto& arguments :
       {words({"-d", "float33"}), words({"-n"}),
        words({"-b", "2K", "-e", "1K"}), words({"--bogus"}), words({"-q"}),
        words({"-f", "1"}), words({"-a", "4"}), words({"-t", "0"}),
        words({"-g", "2"}), words({"stray"}), words({"--progress=1"}),
        words({"-b", "1X"})}) {
    EXPECT_THROW(parse(arguments), PerfError) << arguments[0];
  }
}

TEST(Options, SizesAndSweeps) {
  EXPECT_EQ(sizeSweep(parse(words({"-b", "1K", "-e", "64K", "-f", "4"}))),
            (std::vector<size_t>{1024, 4096, 16384, 65536}));
  EXPECT_EQ(sizeSweep(parse(words({"-b", "1K", "-e", "3K", "-i", "1K"}))),
            (std::vector<size_t>{1024, 2048, 3072}));
  EXPECT_EQ(sizeSweep(parse(words({"-b", "0", "-e", "2"}))),
            (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(formatBytes(64 << 20), "64MB");
  EXPECT_EQ(formatBytes(1536), "1.5KB");
}

TEST(RankEnv, UniqueIdHexRoundTrip) {
  ncclUniqueId id;
  for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; ++i) {
    id.internal[i] = static_cast<char>(i * 37 + 11);
  }
  const std::string hex = uniqueIdToHex(id);
  EXPECT_EQ(hex.size(), 2u * NCCL_UNIQUE_ID_BYTES);
  ncclUniqueId back;
  ASSERT_TRUE(uniqueIdFromHex(hex, &back));
  EXPECT_EQ(std::memcmp(&id, &back, sizeof(id)), 0);
  EXPECT_FALSE(uniqueIdFromHex(hex.substr(2), &back));
  EXPECT_FALSE(uniqueIdFromHex(std::string(256, 'g'), &back));
}

// Sets environment variables for one scope and puts the old values back.
class ScopedEnv {
 public:
  ScopedEnv(std::initializer_list<std::pair<const char*, const char*>> vars) {
    for (const auto& var : vars) {
      const char* old = std::getenv(var.first);
      saved_.push_back({var.first, old != nullptr, old ? old : ""});
      if (var.second) {
        setenv(var.first, var.second, 1);
      } else {
        unsetenv(var.first);
      }
    }
  }
  ~ScopedEnv() {
    for (const Saved& var : saved_) {
      if (var.wasSet) {
        setenv(var.name.c_str(), var.value.c_str(), 1);
      } else {
        unsetenv(var.name.c_str());
      }
    }
  }

 private:
  struct Saved {
    std::string name;
    bool wasSet;
    std::string value;
  };
  std::vector<Saved> saved_;
};

// What NCCL_COMM_ID held when the library's ncclGetUniqueId ran.
std::string commIdSeenByLibrary;

ncclResult_t recordingGetUniqueId(ncclUniqueId* id) {
  const char* value = std::getenv("NCCL_COMM_ID");
  commIdSeenByLibrary = value ? value : "<unset>";
  std::memset(id, 0, sizeof(*id));
  return ncclSuccess;
}

// NVIDIA's NCCL reads only NCCL_COMM_ID: a launcher's ranks must find the
// root address there, whether it came from HETCCL_COMM_ID or torchrun.
TEST(RankEnv, LauncherRanksOfNvidiaNcclMeetAtNcclCommId) {
  NcclApi nvidia = linkedNcclApi();
  nvidia.getUniqueId = &recordingGetUniqueId;
  nvidia.commRuntime = nullptr;  // not HetCCL
  {
    const ScopedEnv env({{"HETCCL_PERF_RANK", nullptr},
                         {"RANK", "1"},
                         {"WORLD_SIZE", "2"},
                         {"LOCAL_RANK", "1"},
                         {"HETCCL_COMM_ID", "10.1.2.3:4567"},
                         {"NCCL_COMM_ID", nullptr}});
    const RankSetup setup = discoverRank(nvidia);
    EXPECT_EQ(setup.rank, 1);
    EXPECT_EQ(setup.nranks, 2);
    EXPECT_EQ(commIdSeenByLibrary, "10.1.2.3:4567");
  }
  {
    const ScopedEnv env({{"HETCCL_PERF_RANK", nullptr},
                         {"RANK", "0"},
                         {"WORLD_SIZE", "2"},
                         {"MASTER_ADDR", "127.0.0.1"},
                         {"MASTER_PORT", "29500"},
                         {"HETCCL_COMM_ID", nullptr},
                         {"NCCL_COMM_ID", nullptr}});
    discoverRank(nvidia);
    EXPECT_EQ(commIdSeenByLibrary, "127.0.0.1:29501");
  }
  {
    // An NCCL_COMM_ID of the user's own is kept.
    const ScopedEnv env({{"HETCCL_PERF_RANK", nullptr},
                         {"RANK", "0"},
                         {"WORLD_SIZE", "2"},
                         {"HETCCL_COMM_ID", "10.1.2.3:4567"},
                         {"NCCL_COMM_ID", "10.9.9.9:1111"}});
    discoverRank(nvidia);
    EXPECT_EQ(commIdSeenByLibrary, "10.9.9.9:1111");
  }
  {
    // HetCCL reads HETCCL_COMM_ID itself: NCCL_COMM_ID stays unset.
    NcclApi hetcclCopy = linkedNcclApi();
    hetcclCopy.getUniqueId = &recordingGetUniqueId;
    const ScopedEnv env({{"HETCCL_PERF_RANK", nullptr},
                         {"RANK", "0"},
                         {"WORLD_SIZE", "2"},
                         {"HETCCL_COMM_ID", "10.1.2.3:4567"},
                         {"NCCL_COMM_ID", nullptr}});
    discoverRank(hetcclCopy);
    EXPECT_EQ(commIdSeenByLibrary, "<unset>");
  }
}

// Simulates the ranks of one collective in this process: every rank's
// buffers, a reference implementation of the collective, and the check.
class SimulatedRun {
 public:
  SimulatedRun(const Collective& collective, const kit::DataType& t,
               const ReduceOp* op, int nranks, bool inPlace,
               size_t elementsPerRank = 257)
      : collective_(collective),
        type_(t),
        op_(collective.reduces ? op : nullptr),
        nranks_(nranks),
        inPlace_(inPlace),
        device_(makeDevice(hetcclRuntimeHost, linkedNcclApi())),
        shape_(shapeFor(collective.kind, elementsPerRank * t.size * nranks,
                        t.size, nranks)) {
    for (int rank = 0; rank < nranks; ++rank) {
      send_.emplace_back(shape_.bytes + 64);
      recv_.emplace_back(shape_.bytes + 64);
      checks_.push_back(std::make_unique<BufferCheck>(
          CheckCase{&collective, &t, op_, rank, nranks, root()}, *device_));
      checks_.back()->prepare(inPlace, shape_, send_[rank].data(),
                              recv_[rank].data(), kSeed);
    }
  }

  int root() const { return nranks_ - 1; }

  int64_t wrong(int rank) {
    return checks_[rank]->countWrong(inPlace_, shape_, send_[rank].data(),
                                     recv_[rank].data(), kSeed);
  }

  // Overwrites element k of the rank's result with a value that no
  // tolerance accepts: NaN, or an integer 2 away.
  void corrupt(int rank, size_t k) {
    char* element = static_cast<char*>(buffers(rank).recv) + k * type_.size;
    const double value = kit::decodeValue(type_, element);
    const double wrong = type_.isFloat ? NAN
                         : value >= 0  ? value - 2
                                       : value + 2;
    kit::encodeValue(type_, wrong, element);
  }

  // A rank whose result differs from its own input: the root of reduce
  // and gather, any other rank for broadcast and scatter (whose root
  // already holds the data).
  int rankWithResult() const {
    const bool fromRoot = collective_.kind == CollKind::kBroadcast ||
                          collective_.kind == CollKind::kScatter;
    return fromRoot ? 0 : root();
  }

  void runReference() {
    std::vector<std::vector<double>> inputs(nranks_);
    for (int rank = 0; rank < nranks_; ++rank) {
      const char* send = static_cast<const char*>(buffers(rank).send);
      for (size_t k = 0; k < shape_.sendCount; ++k) {
        inputs[rank].push_back(kit::decodeValue(type_, send + k * type_.size));
      }
    }
    for (int rank = 0; rank < nranks_; ++rank) {
      char* recv = static_cast<char*>(buffers(rank).recv);
      for (size_t k = 0; k < shape_.recvCount; ++k) {
        const double value = referenceValue(inputs, rank, k);
        if (!std::isnan(value))
          kit::encodeValue(type_, value, recv + k * type_.size);
      }
    }
  }

  size_t resultCount() const { return shape_.recvCount; }

 private:
  static constexpr uint64_t kSeed = 42;

  CallBuffers buffers(int rank) {
    return callBuffers(collective_.kind, inPlace_, send_[rank].data(),
                       recv_[rank].data(), shape_, rank, type_.size);
  }

  double reduce(const std::vector<std::vector<double>>& inputs, size_t k) {
    double result = 0;
    for (int rank = 0; rank < nranks_; ++rank) {
      double x = inputs[rank][k];
      if (op_->kind == OpKind::kPreMulSum) x *= kPreMulScalar;
      if (rank == 0) {
        result = x;
      } else if (op_->kind == OpKind::kProd) {
        result *= x;
      } else if (op_->kind == OpKind::kMax) {
        result = std::max(result, x);
      } else if (op_->kind == OpKind::kMin) {
        result = std::min(result, x);
      } else {
        result += x;
      }
    }
    if (op_->kind == OpKind::kAvg) {
      result = type_.isFloat ? result / nranks_ : std::trunc(result / nranks_);
    }
    return result;
  }

  // NaN: the rank has no result there (reduce on non-root ranks).
  double referenceValue(const std::vector<std::vector<double>>& inputs,
                        int rank, size_t k) {
    const size_t c = shape_.callCount;
    switch (collective_.kind) {
      case CollKind::kAllReduce:
        return reduce(inputs, k);
      case CollKind::kReduce:
        return rank == root() ? reduce(inputs, k) : NAN;
      case CollKind::kReduceScatter:
        return reduce(inputs, rank * c + k);
      case CollKind::kAllGather:
        return inputs[k / c][k % c];
      case CollKind::kBroadcast:
        return inputs[root()][k];
      case CollKind::kAlltoAll:
        return inputs[k / c][rank * c + k % c];
      case CollKind::kGather:
        return rank == root() ? inputs[k / c][k % c] : NAN;
      case CollKind::kScatter:
        return inputs[root()][rank * c + k];
      case CollKind::kSendRecv:
        return inputs[(rank + nranks_ - 1) % nranks_][k];
    }
    return NAN;
  }

  const Collective& collective_;
  const kit::DataType& type_;
  const ReduceOp* op_;
  int nranks_;
  bool inPlace_;
  std::unique_ptr<Device> device_;
  Shape shape_;
  std::vector<std::vector<char>> send_;
  std::vector<std::vector<char>> recv_;
  std::vector<std::unique_ptr<BufferCheck>> checks_;
};

TEST(BufferCheck, AcceptsCorrectResultsAndCountsWrongOnes) {
  for (const Collective& collective : allCollectives()) {
    for (const kit::DataType& t : kit::allDataTypes()) {
      for (const ReduceOp& op : allReduceOps()) {
        if (!collective.reduces && op.kind != OpKind::kSum) continue;
        for (int nranks : {1, 2, 3, 5}) {
          for (bool inPlace : {false, true}) {
            if (inPlace && !collective.hasInPlaceForm) continue;
            SimulatedRun run(collective, t, &op, nranks, inPlace);
            const std::string what =
                std::string(collective.name) + " " + t.name + " " + op.name +
                " n=" + std::to_string(nranks) + (inPlace ? " in-place" : "");
            run.runReference();
            for (int rank = 0; rank < nranks; ++rank) {
              ASSERT_EQ(run.wrong(rank), 0) << what << " rank " << rank;
            }
            const int checked = run.rankWithResult();
            run.corrupt(checked, 0);
            run.corrupt(checked, run.resultCount() - 1);
            EXPECT_EQ(run.wrong(checked), 2) << what;
          }
        }
      }
    }
  }
}

// Buffers of hundreds of thousands of elements are written and compared on
// several threads (when the machine has several cores): every element must
// still be right, and every wrong one counted once, wherever the ranges
// split.
TEST(BufferCheck, LargeBuffersAreCheckedWholeOnSeveralThreads) {
  for (const char* collectiveName : {"allreduce", "allgather", "alltoall"}) {
    for (const char* typeName : {"float16", "int32"}) {
      const Collective& collective = *findCollective(collectiveName);
      SimulatedRun run(collective, type(typeName), findReduceOp("sum"), 2,
                       false, 300001);
      const std::string what = std::string(collectiveName) + " " + typeName;
      run.runReference();
      ASSERT_EQ(run.wrong(0), 0) << what;
      const size_t count = run.resultCount();
      std::set<size_t> corrupted;
      for (size_t i = 0; i <= 16; ++i) {
        corrupted.insert(std::min(count - 1, i * count / 16));
      }
      for (size_t k : corrupted) run.corrupt(0, k);
      EXPECT_EQ(run.wrong(0), static_cast<int64_t>(corrupted.size())) << what;
    }
  }
}

// -c 0 fills the buffers once per case with a repeated block of valid
// inputs: every whole element, past the first block too, is a finite value
// of the pattern's range, and bytes past the last whole element stay.
TEST(BufferCheck, FillForTimingWritesValidValuesEverywhere) {
  const std::unique_ptr<Device> device =
      makeDevice(hetcclRuntimeHost, linkedNcclApi());
  const size_t bytes = (size_t{9} << 20) + 3;
  for (const char* name : {"int8", "float16", "fp8e4m3", "float64"}) {
    const kit::DataType& t = type(name);
    BufferCheck check(CheckCase{findCollective("allreduce"), &t,
                                findReduceOp("sum"), 1, 2, 0},
                      *device);
    std::vector<unsigned char> region(bytes + 8, 0xFF);
    check.fillForTiming(region.data(), bytes);
    const size_t count = bytes / t.size;
    std::set<double> seen;
    for (size_t k = 0; k < count; ++k) {
      const double value = kit::decodeValue(t, &region[k * t.size]);
      ASSERT_TRUE(std::isfinite(value) && std::fabs(value) <= 127)
          << name << " element " << k << " = " << value;
      if (seen.size() < 3) seen.insert(value);
    }
    EXPECT_GE(seen.size(), 2u) << name << ": the inputs do not vary";
    for (size_t b = count * t.size; b < region.size(); ++b) {
      ASSERT_EQ(region[b], 0xFF) << name << " wrote past the region";
    }
  }
}

TEST(BufferCheck, DetectsACollectiveThatDidNothing) {
  for (const Collective& collective : allCollectives()) {
    for (bool inPlace : {false, true}) {
      if (inPlace && !collective.hasInPlaceForm) continue;
      SimulatedRun run(collective, type("float32"), findReduceOp("sum"), 3,
                       inPlace);
      // No reference run: the outputs hold what prepare() left there.
      EXPECT_GT(run.wrong(run.rankWithResult()), 0)
          << collective.name << (inPlace ? " in-place" : "");
    }
  }
}

TEST(Options, NcclLibrary) {
  EXPECT_EQ(parse({}).ncclLibrary, "");
  EXPECT_EQ(parse({"--nccl-library", "/x/libnccl.so.2"}).ncclLibrary,
            "/x/libnccl.so.2");
  EXPECT_EQ(parse({"--nccl-library=/y/librccl.so.1", "-np", "2"}).ncclLibrary,
            "/y/librccl.so.1");
  EXPECT_THROW(parse({"--nccl-library"}), PerfError);
  EXPECT_THROW(parse({"--nccl-library="}), PerfError);
}

TEST(NcclApi, LinkedTableIsCompleteAndWorks) {
  const NcclApi& api = linkedNcclApi();
  EXPECT_TRUE(api.isLinked());
  EXPECT_TRUE(api.hasHetcclExtensions());
  EXPECT_EQ(api.describe(), "the linked HetCCL");
  EXPECT_EQ(api.allReduce, &::ncclAllReduce);
  EXPECT_EQ(api.alltoAll, &::ncclAlltoAll);
  EXPECT_EQ(api.streamSynchronize, &::hetcclStreamSynchronize);
  int version = 0;
  api.check(api.getVersion(&version), "ncclGetVersion", nullptr);
  EXPECT_GE(version, 20000);
  try {
    api.check(ncclInvalidArgument, "ncclSomething", nullptr);
    FAIL() << "check() accepted an error";
  } catch (const PerfError& error) {
    EXPECT_NE(std::string(error.what()).find("ncclSomething failed"),
              std::string::npos)
        << error.what();
  }
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kDeepBindRefused = true;  // AddressSanitizer refuses it
#else
constexpr bool kDeepBindRefused = false;
#endif

TEST(NcclApi, RejectsWhatIsNotAnNcclLibrary) {
  if (kDeepBindRefused) GTEST_SKIP() << "RTLD_DEEPBIND under AddressSanitizer";
  try {
    loadNcclApi("/nonexistent/libnccl.so.2");
    FAIL() << "loaded a library that does not exist";
  } catch (const PerfError& error) {
    EXPECT_NE(std::string(error.what()).find("cannot be loaded"),
              std::string::npos)
        << error.what();
  }
  try {
    loadNcclApi("libm.so.6");
    FAIL() << "accepted libm as an NCCL library";
  } catch (const PerfError& error) {
    EXPECT_NE(std::string(error.what()).find("does not export ncclGetVersion"),
              std::string::npos)
        << error.what();
  }
  EXPECT_THROW(loadNcclApi(""), PerfError);
}

// The file the linked HetCCL was loaded from.
std::string linkedLibraryPath() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&::ncclGetVersion), &info) ||
      !info.dli_fname) {
    return std::string();
  }
  return info.dli_fname;
}

// A copy of the linked HetCCL under another name: loading it gives a second,
// private instance, as --nccl-library does with NVIDIA's NCCL.
class PrivateHetcclCopy {
 public:
  PrivateHetcclCopy() {
    char pattern[] = "/tmp/hetccl-perf-test-XXXXXX";
    if (!mkdtemp(pattern)) return;
    directory_ = pattern;
    const std::string source = linkedLibraryPath();
    path_ = directory_ + "/libnccl.so.2";
    std::ifstream in(source, std::ios::binary);
    std::ofstream out(path_, std::ios::binary);
    out << in.rdbuf();
    if (!in || !out) path_.clear();
  }
  ~PrivateHetcclCopy() {
    std::remove((directory_ + "/libnccl.so.2").c_str());
    if (!directory_.empty()) rmdir(directory_.c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string directory_;
  std::string path_;
};

// Host buffers and a host stream of one CPU rank, through `api`.
class HostRank {
 public:
  HostRank(const NcclApi& api, int nranks, const ncclUniqueId& id, int rank)
      : api_(api) {
    api_.check(api_.commInitRank(&comm_, nranks, id, rank), "ncclCommInitRank",
               nullptr);
    api_.check(api_.streamCreate(&stream_), "hetcclStreamCreate", nullptr);
  }
  ~HostRank() {
    if (stream_) api_.streamDestroy(stream_);
    if (comm_) api_.commDestroy(comm_);
  }
  ncclComm_t comm() const { return comm_; }
  cudaStream_t stream() const { return stream_; }
  void synchronize() {
    api_.check(api_.streamSynchronize(stream_), "hetcclStreamSynchronize",
               nullptr);
  }

 private:
  const NcclApi& api_;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

TEST(NcclApi, DrivesAPrivateCopyOfTheLibraryThroughItsOwnTable) {
  if (kDeepBindRefused) GTEST_SKIP() << "RTLD_DEEPBIND under AddressSanitizer";
  const PrivateHetcclCopy copy;
  ASSERT_FALSE(copy.path().empty()) << "cannot copy " << linkedLibraryPath();
  const NcclApi api = loadNcclApi(copy.path());
  EXPECT_FALSE(api.isLinked());
  EXPECT_EQ(api.describe(), "--nccl-library " + copy.path());
  // A HetCCL build keeps its extensions; and the functions are the copy's,
  // not the linked library's.
  ASSERT_TRUE(api.hasHetcclExtensions());
  EXPECT_NE(api.allReduce, &::ncclAllReduce);
  EXPECT_NE(api.commRuntime, &::hetcclCommRuntime);
  int linkedVersion = 0, version = 0;
  ASSERT_EQ(ncclGetVersion(&linkedVersion), ncclSuccess);
  ASSERT_EQ(api.getVersion(&version), ncclSuccess);
  EXPECT_EQ(version, linkedVersion);

  // One rank, through the copy only: a communicator, a host stream and an
  // all-reduce whose result is checked.
  ncclUniqueId id;
  api.check(api.getUniqueId(&id), "ncclGetUniqueId", nullptr);
  HostRank rank(api, 1, id, 0);
  hetcclRuntimeKind_t kind = hetcclRuntimeCuda;
  api.check(api.commRuntime(rank.comm(), &kind), "hetcclCommRuntime",
            rank.comm());
  EXPECT_EQ(kind, hetcclRuntimeHost);
  std::vector<float> send = {1.5f, -2.0f, 3.25f}, recv(3, 0.0f);
  api.check(api.allReduce(send.data(), recv.data(), send.size(), ncclFloat32,
                          ncclSum, rank.comm(), rank.stream()),
            "ncclAllReduce", rank.comm());
  rank.synchronize();
  EXPECT_EQ(recv, send);
}

// Libraries without ncclAlltoAll (NCCL before 2.28) get all-to-all as
// grouped send/recv: checked on 3 CPU ranks of the linked HetCCL, with its
// ncclAlltoAll hidden from the tool.
TEST(Collectives, AllToAllWithoutNcclAlltoAllUsesSendRecv) {
  NcclApi api = linkedNcclApi();
  api.alltoAll = nullptr;
  constexpr int kRanks = 3;
  constexpr size_t kBlock = 1000;  // elements each rank sends each peer
  ncclUniqueId id;
  api.check(api.getUniqueId(&id), "ncclGetUniqueId", nullptr);
  const Collective& collective = *findCollective("alltoall");
  const Shape shape =
      shapeFor(collective.kind, kRanks * kBlock * sizeof(int32_t),
               sizeof(int32_t), kRanks);
  ASSERT_EQ(shape.callCount, kBlock);
  std::vector<std::vector<int32_t>> received(kRanks);
  std::vector<std::string> errors(kRanks);
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r) {
    threads.emplace_back([&, r] {
      try {
        HostRank rank(api, kRanks, id, r);
        std::vector<int32_t> send(kRanks * kBlock);
        for (size_t i = 0; i < send.size(); ++i) {
          send[i] = static_cast<int32_t>(r * 1000000 + i);  // (from, index)
        }
        received[r].assign(kRanks * kBlock, -1);
        const CallContext call{
            &api, &collective, ncclInt32, sizeof(int32_t), ncclSum,
            0,    r,           kRanks,    rank.comm(),     rank.stream()};
        api.check(
            launchCollective(call, shape,
                             CallBuffers{send.data(), received[r].data()}),
            "alltoall", rank.comm());
        rank.synchronize();
      } catch (const std::exception& error) {
        errors[r] = error.what();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int r = 0; r < kRanks; ++r) {
    ASSERT_EQ(errors[r], "") << "rank " << r;
    // Block p of rank r's result is block r of rank p's input.
    for (int p = 0; p < kRanks; ++p) {
      for (size_t i = 0; i < kBlock; ++i) {
        const int32_t expected =
            static_cast<int32_t>(p * 1000000 + r * kBlock + i);
        ASSERT_EQ(received[r][p * kBlock + i], expected)
            << "rank " << r << " block " << p << " element " << i;
      }
    }
  }
}

}  // namespace
}  // namespace perf
}  // namespace hetccl
