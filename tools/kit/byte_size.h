// Byte counts as people write them on command lines: "4096", "64K", "16M",
// "1G", "2T" (binary multiples, as nccl-tests reads them), with an optional
// trailing "B".
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace hetccl::kit {

// The number of bytes `text` names, or nothing when it is not a size (no
// leading digit, an unknown suffix, trailing garbage) or does not fit in a
// size_t.
std::optional<size_t> parseByteSize(std::string_view text);

}  // namespace hetccl::kit
