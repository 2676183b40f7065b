#include "util/settings_agreement.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>

#include "util/error.h"
#include "util/wire.h"

namespace hetccl {
namespace {

// Each value travels in a fixed field; a longer one (a string parameter)
// is cut, and still compared in full by the digest.
constexpr size_t kValueBytes = 64;

// Every rank's values, kValueBytes each, rank by rank.
std::vector<char> gatherValues(Oob& oob,
                               const std::vector<SettingValue>& mustAgree) {
  const size_t rowBytes = mustAgree.size() * kValueBytes;
  std::vector<char> table(rowBytes * oob.nranks(), '\0');
  char* own = table.data() + rowBytes * oob.rank();
  for (size_t i = 0; i < mustAgree.size(); ++i)
    std::strncpy(own + i * kValueBytes, mustAgree[i].value.c_str(),
                 kValueBytes - 1);
  oob.allGather(table.data(), rowBytes);
  return table;
}

// "NAME differs: rank 0 has A, rank R has B" for each value that differs
// from rank 0's somewhere, joined by "; ".
std::string describeDifferences(const std::vector<SettingValue>& mustAgree,
                                int nranks, const std::vector<char>& table) {
  const size_t count = mustAgree.size();
  auto value = [&](int rank, size_t i) {
    const char* field = table.data() + (rank * count + i) * kValueBytes;
    return std::string(field, strnlen(field, kValueBytes));
  };
  std::string text;
  for (size_t i = 0; i < count; ++i)
    for (int r = 1; r < nranks; ++r) {
      if (value(r, i) == value(0, i)) continue;
      text += format("%s%s differs: rank 0 has %s, rank %d has %s",
                     text.empty() ? "" : "; ", mustAgree[i].param->name,
                     value(0, i).c_str(), r, value(r, i).c_str());
      break;
    }
  return text;
}

}  // namespace

std::vector<SettingValue> readMustAgree(const ParamList& params) {
  std::vector<SettingValue> values;
  for (const ParamSpec* spec : params)
    if (spec->scope == ParamScope::Same)
      values.push_back({spec, readCanonical(*spec)});
  return values;
}

uint64_t mustAgreeDigest(const std::vector<SettingValue>& mustAgree) {
  std::string text;
  for (const SettingValue& setting : mustAgree)
    text += std::string(setting.param->name) + "=" + setting.value + "\n";
  return fnv1a64(text.data(), text.size());
}

void checkSettingsAgree(Oob& oob, const std::vector<SettingValue>& mustAgree,
                        const std::vector<uint64_t>& digests) {
  if (std::adjacent_find(digests.begin(), digests.end(),
                         std::not_equal_to<uint64_t>()) == digests.end())
    return;
  std::string differences = describeDifferences(mustAgree, oob.nranks(),
                                                gatherValues(oob, mustAgree));
  if (differences.empty())
    differences =
        format("a value longer than %zu characters differs between ranks",
               kValueBytes - 1);
  fail(ncclInvalidUsage,
       "%s: every rank of a communicator needs the same value",
       differences.c_str());
}

}  // namespace hetccl
