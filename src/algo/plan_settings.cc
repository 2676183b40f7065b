#include "algo/plan_settings.h"

#include <cstdlib>
#include <vector>

#include "runtime/runtime_params.h"
#include "util/error.h"

namespace hetccl {
namespace {

// "ALPHA_US,GBPS[,TRANSFER_US]" (e.g. "20,12.5" or "20,12.5,3").
LinkCost parseLinkCost(const std::string& text) {
  std::vector<double> values;
  bool ok = true;
  for (size_t from = 0; ok && from <= text.size();) {
    size_t comma = text.find(',', from);
    if (comma == std::string::npos) comma = text.size();
    const std::string field = text.substr(from, comma - from);
    char* end = nullptr;
    values.push_back(std::strtod(field.c_str(), &end));
    ok = !field.empty() && *end == '\0' && values.back() >= 0;
    from = comma + 1;
  }
  ok = ok && (values.size() == 2 || values.size() == 3) && values[1] > 0;
  if (!ok)
    fail(ncclInvalidArgument,
         "HETCCL_LINK_COST=\"%s\": expected ALPHA_US,GBPS[,TRANSFER_US] (the "
         "link's latency in microseconds, its rate in GB/s and, optionally, "
         "what each further transfer sent at once costs in microseconds, "
         "e.g. 20,12.5 or 20,12.5,3), or unset to measure it",
         text.c_str());
  return {values[0], values[1], values.size() == 3 ? values[2] : 0};
}

// "US", a number of microseconds of at least 0 (e.g. "150" or "37.5").
double parseEngineStep(const std::string& text) {
  char* end = nullptr;
  const double us = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(us >= 0))
    fail(ncclInvalidArgument,
         "HETCCL_ENGINE_STEP=\"%s\": expected the engine's cost per hop "
         "across domains in microseconds (a number of at least 0, e.g. 150), "
         "or unset to time it at init",
         text.c_str());
  return us;
}

}  // namespace

PlanSettings PlanSettings::fromEnvironment() {
  PlanSettings s;
  s.chunkBytes = readBytes(kChunk);
  s.oneShotMaxBytes = readBytes(kOneShotMax);
  s.chunkSet = paramSetting(kChunk).has_value();
  s.oneShotMaxSet = paramSetting(kOneShotMax).has_value();
  if (auto link = readString(kLinkCost)) s.declaredLink = parseLinkCost(*link);
  if (auto step = readString(kEngineStep))
    s.declaredStepUs = parseEngineStep(*step);
  s.hostThreads = static_cast<int>(readInteger(kHostThreads));
  s.timeline = readFlag(kEngineTimeline);
  return s;
}

}  // namespace hetccl
