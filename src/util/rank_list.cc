#include "util/rank_list.h"

#include "util/error.h"

namespace hetccl {

std::string formatRankList(const std::vector<int>& ranks) {
  constexpr size_t kMaxItems = 16;
  std::string out;
  size_t i = 0;
  for (size_t items = 0; i < ranks.size() && items < kMaxItems; ++items) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(ranks[i]);
    if (j > i) out += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  if (i < ranks.size()) out += format(",... (%zu in all)", ranks.size());
  return out;
}

}  // namespace hetccl
