#include "perf/report.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "hetccl.h"
#include "kit/json_text.h"
#include "perf/perf_error.h"

namespace hetccl {
namespace perf {
namespace {

const char* runtimeName(int kind) {
  switch (kind) {
    case hetcclRuntimeHost:
      return "host";
    case hetcclRuntimeCuda:
      return "cuda";
    case hetcclRuntimeHip:
      return "hip";
    default:
      return "?";
  }
}

const char* averageName(TimeAverage average) {
  switch (average) {
    case TimeAverage::kRankZero:
      return "rank 0";
    case TimeAverage::kMean:
      return "mean";
    case TimeAverage::kMin:
      return "min";
    case TimeAverage::kMax:
      return "max";
  }
  return "?";
}

std::string versionText(int code) {
  if (code >= 10000) {
    return strprintf("%d.%d.%d", code / 10000, code % 10000 / 100, code % 100);
  }
  return strprintf("%d.%d.%d", code / 1000, code % 1000 / 100, code % 100);
}

// Fits a time in microseconds into the 8-character column.
std::string formatTime(double us) {
  if (us < 1e4) return strprintf("%.2f", us);
  if (us < 1e5) return strprintf("%.1f", us);
  return strprintf("%.0f", us);
}

std::string placementColumns(const PlacementResult& result) {
  if (!result.ran)
    return strprintf("  %8s  %6s  %6s  %6s", "N/A", "N/A", "N/A", "N/A");
  const std::string wrong =
      result.wrong < 0 ? "N/A" : strprintf("%lld", (long long)result.wrong);
  return strprintf("  %8s  %6.2f  %6.2f  %6s",
                   formatTime(result.timeUs).c_str(), result.algbwGBps,
                   result.busbwGBps, wrong.c_str());
}

// A JSON string literal: quotes, backslashes and control characters
// escaped; "" becomes null (the linked library has no path).
std::string jsonString(const std::string& text) {
  return text.empty() ? "null" : kit::jsonQuote(text);
}

std::string joinNames(const std::vector<const kit::DataType*>& items) {
  std::string text;
  for (const kit::DataType* item : items) {
    text += (text.empty() ? "" : ",") + std::string(item->name);
  }
  return text;
}

// Each line of HetCCL's map as a comment line.
void printTopology(const std::string& map) {
  if (map.empty()) return;
  std::printf("#\n# Topology\n");
  size_t begin = 0;
  while (begin <= map.size()) {
    size_t end = std::min(map.find('\n', begin), map.size());
    std::printf("#  %s\n", map.substr(begin, end - begin).c_str());
    begin = end + 1;
  }
}

}  // namespace

Reporter::Reporter(const Options& options, bool printing)
    : options_(options), printing_(printing) {
  if (printing_ && !options.jsonPath.empty()) {
    json_.reset(std::fopen(options.jsonPath.c_str(), "w"));
    if (!json_) {
      perfFail("cannot write --json file %s: %s", options.jsonPath.c_str(),
               std::strerror(errno));
    }
  }
}

void Reporter::printHeader(const RunDescription& run,
                           const std::vector<RankInfo>& ranks) {
  nranks_ = run.nranks;
  libraryVersion_ = run.libraryVersion;
  if (!printing_) return;
  std::printf(
      "# hetccl-perf: HetCCL %d.%d.%d, library version %s "
      "(ncclGetVersion %d)\n",
      HETCCL_MAJOR, HETCCL_MINOR, HETCCL_PATCH,
      versionText(run.libraryVersion).c_str(), run.libraryVersion);
  std::printf("# library under test: %s\n", run.library.c_str());
  const std::string step = options_.stepBytes > 0
                               ? strprintf("%zu(bytes)", options_.stepBytes)
                               : strprintf("%g(factor)", options_.stepFactor);
  std::printf("# nranks %d  minBytes %zu  maxBytes %zu  step: %s  types: %s\n",
              run.nranks, options_.minBytes, options_.maxBytes, step.c_str(),
              joinNames(options_.dataTypes).c_str());
  std::printf(
      "# warmup iters: %d  iters: %d  agg iters: %d  validation: %d  "
      "blocking: %d  time: %s of ranks\n",
      options_.warmupIters, options_.iters, options_.aggIters,
      options_.checkIters, options_.blocking ? 1 : 0,
      averageName(options_.average));
  std::printf("# ranks started by %s; ncclCommInitRank took %.3f s%s%s\n",
              run.launcher.c_str(), run.initSeconds,
              options_.domainsGiven ? "; domains forced: " : "",
              options_.domainsGiven ? options_.domains.c_str() : "");
  std::printf("#\n# Using devices\n");
  for (const RankInfo& info : ranks) {
    std::printf(
        "#  Rank %3d  Pid %7d  on %16s  runtime %-4s  device %-24s  "
        "domain %d of %d\n",
        info.rank, info.pid, info.host, runtimeName(info.runtime), info.device,
        info.domain, info.ndomains);
  }
  printTopology(run.topology);
  std::printf("#\n");
  std::fflush(stdout);
}

void Reporter::beginTable(const Collective& collective) {
  if (!printing_) return;
  std::printf("# Collective test: %s\n", collective.name);
  // Centered over the 34-character column groups that start at 55 and 89.
  std::printf("#%65s%-34s  %s\n", "", "out-of-place", "in-place");
  std::printf(
      "#%11s  %12s  %8s  %9s  %6s  %8s  %6s  %6s  %6s  %8s  %6s  %6s  "
      "%6s\n",
      "size", "count", "type", "redop", "root", "time", "algbw", "busbw",
      "#wrong", "time", "algbw", "busbw", "#wrong");
  std::printf(
      "#%11s  %12s  %8s  %9s  %6s  %8s  %6s  %6s  %6s  %8s  %6s  %6s  "
      "%6s\n",
      "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)",
      "(GB/s)", "(GB/s)", "");
  std::fflush(stdout);
}

void Reporter::printRow(const RowResult& row) {
  for (const PlacementResult* result : {&row.outOfPlace, &row.inPlace}) {
    if (!result->ran) continue;
    if (result->wrong > 0) totalWrong_ += result->wrong;
    busbwSum_ += result->busbwGBps;
    ++busbwCount_;
  }
  if (!printing_) return;
  std::printf("%12zu  %12zu  %8s  %9s  %6d%s%s\n", row.shape.bytes,
              row.shape.count, row.type->name, row.op ? row.op->name : "none",
              row.root, placementColumns(row.outOfPlace).c_str(),
              placementColumns(row.inPlace).c_str());
  std::fflush(stdout);
  if (row.outOfPlace.ran) writeJson(row, row.outOfPlace, false);
  if (row.inPlace.ran) writeJson(row, row.inPlace, true);
}

void Reporter::writeJson(const RowResult& row, const PlacementResult& result,
                         bool inPlace) {
  if (!json_) return;
  const std::string wrong =
      result.wrong < 0 ? "null" : strprintf("%lld", (long long)result.wrong);
  // "hetccl": the linked HetCCL; "nccl": the --nccl-library one.
  const char* impl = options_.ncclLibrary.empty() ? "hetccl" : "nccl";
  std::fprintf(json_.get(),
               "{\"impl\":\"%s\",\"library\":%s,\"version\":%d,"
               "\"coll\":\"%s\",\"nranks\":%d,"
               "\"bytes\":%zu,\"count\":%zu,\"dtype\":\"%s\",\"op\":\"%s\","
               "\"inplace\":%s,\"time_us\":%.3f,\"enqueue_us\":%.3f,"
               "\"algbw_GBps\":%.4f,"
               "\"busbw_GBps\":%.4f,\"wrong\":%s}\n",
               impl, jsonString(options_.ncclLibrary).c_str(), libraryVersion_,
               row.collective->name, nranks_, row.shape.bytes, row.shape.count,
               row.type->name, row.op ? row.op->name : "none",
               inPlace ? "true" : "false", result.timeUs, result.enqueueUs,
               result.algbwGBps, result.busbwGBps, wrong.c_str());
  std::fflush(json_.get());
}

void Reporter::printSummary() {
  if (!printing_) return;
  if (options_.checkIters > 0) {
    std::printf("# Out of bounds values : %lld %s\n", (long long)totalWrong_,
                totalWrong_ ? "FAILED" : "OK");
  } else {
    std::printf("# Out of bounds values : N/A (check disabled)\n");
  }
  std::printf("# Avg bus bandwidth    : %g\n",
              busbwCount_ ? busbwSum_ / busbwCount_ : 0.0);
  std::printf("#\n");
  std::fflush(stdout);
}

Progress::Progress(bool enabled, int total)
    : enabled_(enabled), terminal_(isatty(STDERR_FILENO)), total_(total) {}

Progress::~Progress() { clear(); }

void Progress::step(const std::string& what) {
  ++done_;
  if (!enabled_) return;
  const int width = static_cast<int>(std::to_string(total_).size());
  std::fprintf(stderr, "%s[%*d/%d] %s ...%s", terminal_ ? "\r" : "", width,
               done_, total_, what.c_str(), terminal_ ? "\033[K" : "\n");
  std::fflush(stderr);
  lineShown_ = terminal_;
}

void Progress::clear() {
  if (!lineShown_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  lineShown_ = false;
}

}  // namespace perf
}  // namespace hetccl
