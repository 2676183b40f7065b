#include "algo/plan_settings.h"

#include <cstdlib>

#include "runtime/runtime_params.h"
#include "util/error.h"

namespace hetccl {
namespace {

// "ALPHA_US,GBPS" (e.g. "20,12.5").
LinkCost parseLinkCost(const std::string& text) {
  const size_t comma = text.find(',');
  char* end = nullptr;
  LinkCost cost;
  bool ok = comma != std::string::npos;
  if (ok) {
    const std::string alpha = text.substr(0, comma);
    const std::string rate = text.substr(comma + 1);
    cost.alphaUs = std::strtod(alpha.c_str(), &end);
    ok = !alpha.empty() && *end == '\0' && cost.alphaUs >= 0;
    cost.gbps = std::strtod(rate.c_str(), &end);
    ok = ok && !rate.empty() && *end == '\0' && cost.gbps > 0;
  }
  if (!ok)
    fail(ncclInvalidArgument,
         "HETCCL_LINK_COST=\"%s\": expected ALPHA_US,GBPS (the link's "
         "latency in microseconds and rate in GB/s, e.g. 20,12.5), or "
         "unset to measure it",
         text.c_str());
  return cost;
}

}  // namespace

PlanSettings PlanSettings::fromEnvironment() {
  PlanSettings s;
  s.chunkBytes = readBytes(kChunk);
  s.oneShotMaxBytes = readBytes(kOneShotMax);
  s.chunkSet = paramSetting(kChunk).has_value();
  s.oneShotMaxSet = paramSetting(kOneShotMax).has_value();
  if (auto link = readString(kLinkCost)) s.declaredLink = parseLinkCost(*link);
  s.hostThreads = static_cast<int>(readInteger(kHostThreads));
  s.timeline = readFlag(kEngineTimeline);
  return s;
}

}  // namespace hetccl
