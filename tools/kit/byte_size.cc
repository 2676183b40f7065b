#include "kit/byte_size.h"

#include <cctype>
#include <limits>

namespace hetccl::kit {
namespace {

// log2 of the multiple a suffix letter names; -1 if it names none.
int suffixShift(char letter) {
  switch (std::toupper(static_cast<unsigned char>(letter))) {
    case 'K':
      return 10;
    case 'M':
      return 20;
    case 'G':
      return 30;
    case 'T':
      return 40;
    default:
      return -1;
  }
}

}  // namespace

std::optional<size_t> parseByteSize(std::string_view text) {
  constexpr size_t kMax = std::numeric_limits<size_t>::max();
  size_t position = 0;
  size_t number = 0;
  // Digits by hand: strtoull would accept a sign and leading blanks.
  while (position < text.size() &&
         std::isdigit(static_cast<unsigned char>(text[position]))) {
    const size_t digit = static_cast<size_t>(text[position] - '0');
    if (number > (kMax - digit) / 10) return std::nullopt;
    number = number * 10 + digit;
    ++position;
  }
  if (position == 0) return std::nullopt;
  std::string_view suffix = text.substr(position);
  if (!suffix.empty() && (suffix.back() == 'B' || suffix.back() == 'b')) {
    suffix.remove_suffix(1);
  }
  if (suffix.empty()) return number;
  const int shift = suffix.size() == 1 ? suffixShift(suffix[0]) : -1;
  if (shift < 0 || number > (kMax >> shift)) return std::nullopt;
  return number << shift;
}

}  // namespace hetccl::kit
