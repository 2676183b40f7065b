// hetccl-sim: HetCCL's plans on a simulated cluster (tools/sim/README.md).
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "kit/dtype.h"
#include "kit/json_text.h"
#include "options.h"
#include "simulation.h"

namespace hetccl::sim {
namespace {

std::string jsonLine(const Options& options, SimCollective collective,
                     size_t bytes, const SimResult& r) {
  char numbers[512];
  std::snprintf(
      numbers, sizeof(numbers),
      "\"size\": %zu, \"time_us\": %.3f, \"algbw_GBps\": %.4f, "
      "\"busbw_GBps\": %.4f, \"ranks\": %d, \"domains\": %zu, \"hosts\": "
      "%d, \"messages_per_rank_max\": %zu, \"messages_per_rank_mean\": %.2f, "
      "\"scratch_bytes_max\": %zu, \"pinned_bytes_max\": %zu, "
      "\"peers_per_rank_max\": %zu, "
      "\"busiest_utilization\": %.4f, "
      "\"busiest_bytes\": %zu, \"domain_us\": %.3f, \"memory_us\": %.3f, "
      "\"ideal_us\": %.3f",
      bytes, r.seconds * 1e6, r.algGBps, r.busGBps, options.cluster.nranks(),
      options.cluster.domains.size(), options.cluster.nhosts(), r.messagesMax,
      r.messagesMean, r.scratchMax, r.pinnedMax, r.peersMax,
      r.busiestUtilization, r.busiestBytes, r.domainSeconds * 1e6,
      r.memorySeconds * 1e6, r.idealSeconds * 1e6);
  return std::string("{\"collective\": ") +
         kit::jsonQuote(collectiveName(collective)) +
         ", \"dtype\": " + kit::jsonQuote(kit::dataTypeOf(options.dtype).name) +
         ", " + numbers + ", \"busiest\": " + kit::jsonQuote(r.busiest) + "}";
}

int run(const Options& options) {
  std::ofstream json;
  if (!options.jsonPath.empty()) {
    json.open(options.jsonPath);
    if (!json) throw std::runtime_error("cannot write " + options.jsonPath);
  }
  const size_t elt = kit::dataTypeOf(options.dtype).size;
  std::printf("# hetccl-sim: %s\n", describe(options.cluster).c_str());
  if (options.knobs.tuning)
    std::printf("# cost model: %s\n", options.knobs.tuning->summary().c_str());
  for (SimCollective collective : options.collectives) {
    std::printf("# %s, %s\n", collectiveName(collective),
                kit::dataTypeOf(options.dtype).name);
    std::printf("# %12s %12s %9s %9s %6s %8s %6s %12s %12s  %s\n", "size(B)",
                "time(us)", "algbw", "busbw", "ideal", "msgs/rk", "peers",
                "scratch(B)", "pinned(B)", "busiest (use)");
    for (double size = static_cast<double>(options.minBytes);
         size <= static_cast<double>(options.maxBytes);
         size *= options.factor) {
      OpSpec op;
      op.collective = collective;
      op.dtype = options.dtype;
      // Whole elements, and at least one per rank.
      const size_t minimum = elt * options.cluster.nranks();
      op.bytes =
          std::max(minimum, static_cast<size_t>(size) / minimum * minimum);
      const SimResult r = simulate(options.cluster, op, options.knobs);
      std::printf(
          "  %12zu %12.2f %9.3f %9.3f %5.2fx %8zu %6zu %12zu %12zu  %s "
          "(%.0f%%)\n",
          op.bytes, r.seconds * 1e6, r.algGBps, r.busGBps,
          r.idealSeconds / r.seconds, r.messagesMax, r.peersMax, r.scratchMax,
          r.pinnedMax, r.busiest.c_str(), r.busiestUtilization * 100);
      if (json.is_open())
        json << jsonLine(options, collective, op.bytes, r) << "\n";
      if (options.factor <= 1) break;
    }
  }
  return 0;
}

}  // namespace
}  // namespace hetccl::sim

int main(int argc, char** argv) {
  try {
    const hetccl::sim::Options options = hetccl::sim::parseOptions(
        std::vector<std::string>(argv + 1, argv + argc));
    if (options.help) {
      std::fputs(hetccl::sim::usage(), stdout);
      return 0;
    }
    return hetccl::sim::run(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hetccl-sim: %s\n", e.what());
    return 2;
  }
}
