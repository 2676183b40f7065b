#include "algo/domains.h"

#include <cstdlib>
#include <tuple>

#include "runtime/runtime.h"
#include "util/comma_list.h"
#include "util/error.h"

namespace hetccl {
namespace {

int parseNonNegative(const std::string& text, const std::string& spec) {
  char* end = nullptr;
  long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value < 0 || value > 1 << 20)
    fail(ncclInvalidArgument,
         "HETCCL_DOMAINS=\"%s\": \"%s\" is not a non-negative number",
         spec.c_str(), text.c_str());
  return static_cast<int>(value);
}

}  // namespace

int domainLabelFromSpec(const std::string& spec, int rank, int nranks) {
  if (spec.empty()) return kNoDomainLabel;
  if (spec == "host") return kDomainPerHost;
  if (spec.rfind("split:", 0) == 0) {
    int parts = parseNonNegative(spec.substr(6), spec);
    if (parts < 1 || parts > nranks)
      fail(ncclInvalidArgument,
           "HETCCL_DOMAINS=\"%s\": cannot split %d ranks into %d domains",
           spec.c_str(), nranks, parts);
    return static_cast<int>(static_cast<long>(rank) * parts / nranks);
  }
  std::vector<std::string> labels = splitCommaList(spec);
  if (static_cast<int>(labels.size()) != nranks)
    fail(ncclInvalidArgument,
         "HETCCL_DOMAINS=\"%s\" has %zu labels for %d ranks (expected one "
         "label per rank, \"split:K\" or \"host\")",
         spec.c_str(), labels.size(), nranks);
  // Every label is checked, so that all ranks reject a bad value alike.
  std::vector<int> values;
  for (const std::string& label : labels)
    values.push_back(parseNonNegative(label, spec));
  return values[rank];
}

DomainMap::DomainMap(const std::vector<RankPlacement>& peers)
    : domainOf_(peers.size()), localRank_(peers.size()) {
  // The identity of a rank's domain.
  auto keyOf = [](const RankPlacement& peer) {
    bool byHost = peer.runtime == static_cast<int>(RuntimeKind::Host) ||
                  peer.domainLabel == kDomainPerHost;
    return std::make_tuple(peer.runtime, peer.domainLabel,
                           byHost ? peer.hostId : 0);
  };
  std::vector<decltype(keyOf(peers[0]))> keys;
  for (size_t r = 0; r < peers.size(); ++r) {
    auto key = keyOf(peers[r]);
    size_t d = 0;
    while (d < keys.size() && keys[d] != key) ++d;
    if (d == keys.size()) {
      keys.push_back(key);
      members_.emplace_back();
    }
    domainOf_[r] = static_cast<int>(d);
    localRank_[r] = static_cast<int>(members_[d].size());
    members_[d].push_back(static_cast<int>(r));
  }
}

}  // namespace hetccl
