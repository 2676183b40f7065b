// Comma-separated lists, as environment variables spell them.
#pragma once

#include <string>
#include <vector>

namespace hetccl {

// "a,b,,c" -> {"a", "b", "", "c"}; "" -> {""}.
std::vector<std::string> splitCommaList(const std::string& text);

}  // namespace hetccl
