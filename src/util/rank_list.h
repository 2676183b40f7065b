// Ranks as people read them in a message.
#pragma once

#include <string>
#include <vector>

namespace hetccl {

// "3", "0,2,5-7" for ascending ranks; long lists end in "... (N in all)".
std::string formatRankList(const std::vector<int>& ranks);

}  // namespace hetccl
