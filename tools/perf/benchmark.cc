#include "perf/benchmark.h"

#include <unistd.h>

#include <chrono>

#include "perf/perf_error.h"

namespace hetccl {
namespace perf {
namespace {

using Clock = std::chrono::steady_clock;

// The reduction op of one case: a built-in op, or a PreMulSum op created for
// the communicator and type and destroyed afterwards.
class ScopedReduceOp {
 public:
  ScopedReduceOp(const NcclApi& nccl, const ReduceOp* op,
                 const kit::DataType& type, ncclComm_t comm)
      : nccl_(nccl), comm_(comm) {
    if (!op || op->kind != OpKind::kPreMulSum) {
      op_ = op ? op->builtin : ncclSum;
      return;
    }
    alignas(8) char scalar[8] = {};
    kit::encodeValue(type, kPreMulScalar, scalar);
    nccl_.check(nccl_.redOpCreatePreMulSum(&op_, scalar, type.nccl,
                                           ncclScalarHostImmediate, comm),
                "ncclRedOpCreatePreMulSum", comm);
    created_ = true;
  }
  ~ScopedReduceOp() {
    if (created_) nccl_.redOpDestroy(op_, comm_);
  }
  ScopedReduceOp(const ScopedReduceOp&) = delete;
  ScopedReduceOp& operator=(const ScopedReduceOp&) = delete;

  ncclRedOp_t get() const { return op_; }

 private:
  const NcclApi& nccl_;
  ncclComm_t comm_;
  ncclRedOp_t op_ = ncclSum;
  bool created_ = false;
};

// The data of each check differs by size and repetition, so that a result
// left over from an earlier run cannot pass for a new one.
uint64_t checkSeed(const Shape& shape, int repetition, bool inPlace) {
  return (static_cast<uint64_t>(shape.bytes) << 8) ^
         (static_cast<uint64_t>(repetition) << 1) ^ (inPlace ? 1u : 0u);
}

std::string stepDescription(const Collective& collective, const Shape& shape,
                            const kit::DataType& type, const ReduceOp* op) {
  std::string text = std::string(collective.name) + " " +
                     formatBytes(shape.bytes) + " " + type.name;
  if (op) text += std::string(" ") + op->name;
  return text;
}

}  // namespace

Benchmark::Benchmark(const Options& options, const RankContext& context,
                     Control& control, Reporter& reporter)
    : options_(options),
      context_(context),
      control_(control),
      reporter_(reporter),
      send_(*context.device, options.maxBytes),
      recv_(*context.device, options.maxBytes) {}

std::vector<Benchmark::Case> Benchmark::cases() const {
  std::vector<Case> all;
  for (const Collective* collective : options_.collectives) {
    for (const kit::DataType* type : options_.dataTypes) {
      if (!collective->reduces) {
        all.push_back(Case{collective, type, nullptr});
        continue;
      }
      for (const ReduceOp* op : options_.ops) {
        all.push_back(Case{collective, type, op});
      }
    }
  }
  return all;
}

std::vector<Shape> Benchmark::shapes(const Case& testCase) const {
  std::vector<Shape> result;
  for (size_t requested : sizeSweep(options_)) {
    const Shape shape = shapeFor(testCase.collective->kind, requested,
                                 testCase.type->size, context_.nranks);
    // A size too small for one element per rank is skipped (unless 0 bytes
    // was asked for), and sizes that round to the same shape run once.
    if (shape.count == 0 && requested != 0) continue;
    if (!result.empty() && result.back().bytes == shape.bytes) continue;
    result.push_back(shape);
  }
  return result;
}

int64_t Benchmark::run() {
  const std::vector<Case> all = cases();
  int steps = 0;
  for (const Case& testCase : all) {
    steps += static_cast<int>(shapes(testCase).size());
  }
  const bool showProgress =
      context_.rank == 0 && (options_.progress || isatty(STDERR_FILENO));
  Progress progress(showProgress, steps);
  const Collective* tableOf = nullptr;
  for (const Case& testCase : all) {
    if (testCase.collective != tableOf) {
      progress.clear();
      reporter_.beginTable(*testCase.collective);
      tableOf = testCase.collective;
    }
    runCase(testCase, progress);
  }
  return totalWrong_;
}

void Benchmark::runCase(const Case& testCase, Progress& progress) {
  const Collective& collective = *testCase.collective;
  const kit::DataType& type = *testCase.type;
  const NcclApi& nccl = *context_.nccl;
  ScopedReduceOp op(nccl, testCase.op, type, context_.comm);
  const CallContext call{&nccl,          &collective,     type.nccl,
                         type.size,      op.get(),        options_.root,
                         context_.rank,  context_.nranks, context_.comm,
                         context_.stream};
  BufferCheck check(CheckCase{&collective, &type, testCase.op, context_.rank,
                              context_.nranks, options_.root},
                    *context_.device);
  if (options_.checkIters == 0) {
    // The timed launches need valid inputs, not checkable ones: written once
    // for every size of the case.
    check.fillForTiming(send_.get(), send_.size());
    check.fillForTiming(recv_.get(), recv_.size());
  }
  for (const Shape& shape : shapes(testCase)) {
    progress.step(stepDescription(collective, shape, type, testCase.op));
    RowResult row{
        &collective, &type, testCase.op, collective.rooted ? options_.root : -1,
        shape,       {},    {}};
    if (options_.runOutOfPlace) {
      row.outOfPlace = runPlacement(testCase, call, shape, false, check);
    }
    if (options_.runInPlace && collective.hasInPlaceForm) {
      row.inPlace = runPlacement(testCase, call, shape, true, check);
    }
    progress.clear();
    reporter_.printRow(row);
  }
}

PlacementResult Benchmark::runPlacement(const Case& testCase,
                                        const CallContext& call,
                                        const Shape& shape, bool inPlace,
                                        BufferCheck& check) {
  Device& device = *context_.device;
  const CallBuffers buffers =
      callBuffers(testCase.collective->kind, inPlace, send_.get(), recv_.get(),
                  shape, context_.rank, testCase.type->size);
  PlacementResult result;
  result.ran = true;

  // Correctness first: fresh inputs, one launch, compare. The inputs left
  // behind also feed the timed launches (without a check, runCase filled
  // the buffers).
  int64_t wrong = 0;
  for (int repetition = 0; repetition < options_.checkIters; ++repetition) {
    const uint64_t seed = checkSeed(shape, repetition, inPlace);
    check.prepare(inPlace, shape, send_.get(), recv_.get(), seed);
    context_.nccl->check(launchCollective(call, shape, buffers),
                         testCase.collective->name, context_.comm);
    device.synchronize(context_.stream, context_.comm);
    wrong += check.countWrong(inPlace, shape, send_.get(), recv_.get(), seed);
  }

  for (int i = 0; i < options_.warmupIters; ++i) {
    launchIteration(call, shape, buffers);
  }
  device.synchronize(context_.stream, context_.comm);
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < options_.iters; ++i)
    launchIteration(call, shape, buffers);
  const Clock::time_point enqueued = Clock::now();
  device.synchronize(context_.stream, context_.comm);
  const double launches =
      static_cast<double>(options_.iters) * options_.aggIters;
  const double seconds =
      std::chrono::duration<double>(Clock::now() - start).count() / launches;
  const double enqueueSeconds =
      std::chrono::duration<double>(enqueued - start).count() / launches;

  const double combined = combineTimes(seconds);
  result.timeUs = combined * 1e6;
  result.enqueueUs = combineTimes(enqueueSeconds) * 1e6;
  result.algbwGBps = combined > 0 ? shape.bytes / combined / 1e9 : 0;
  result.busbwGBps =
      result.algbwGBps *
      busBandwidthFactor(testCase.collective->kind, context_.nranks);
  if (options_.checkIters > 0) {
    result.wrong = static_cast<int64_t>(
        control_.allReduce(static_cast<double>(wrong), ncclSum));
    totalWrong_ += result.wrong;
  }
  return result;
}

void Benchmark::launchIteration(const CallContext& call, const Shape& shape,
                                const CallBuffers& buffers) {
  const NcclApi& nccl = *context_.nccl;
  const char* name = call.collective->name;
  if (options_.aggIters == 1) {
    nccl.check(launchCollective(call, shape, buffers), name, context_.comm);
  } else {
    nccl.check(nccl.groupStart(), "ncclGroupStart", context_.comm);
    ncclResult_t result = ncclSuccess;
    for (int i = 0; i < options_.aggIters && result == ncclSuccess; ++i) {
      result = launchCollective(call, shape, buffers);
    }
    const ncclResult_t endResult = nccl.groupEnd();
    nccl.check(result, name, context_.comm);
    nccl.check(endResult, "ncclGroupEnd", context_.comm);
  }
  if (options_.blocking)
    context_.device->synchronize(context_.stream, context_.comm);
}

double Benchmark::combineTimes(double seconds) {
  switch (options_.average) {
    case TimeAverage::kRankZero:
      return seconds;  // only rank 0 prints
    case TimeAverage::kMean:
      return control_.allReduce(seconds, ncclSum) / context_.nranks;
    case TimeAverage::kMin:
      return control_.allReduce(seconds, ncclMin);
    case TimeAverage::kMax:
      return control_.allReduce(seconds, ncclMax);
  }
  return seconds;
}

}  // namespace perf
}  // namespace hetccl
