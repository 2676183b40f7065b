#include "engine/gpu/proxy/unchanged_inputs.h"

#include "op/op_traits.h"

namespace hetccl {
namespace {

using Range = std::pair<const char*, const char*>;

bool overlap(const Range& a, const Range& b) {
  return a.first < b.second && b.first < a.second;
}

}  // namespace

void UnchangedInputs::start(const std::vector<Op>& ops, int rank, int nranks) {
  ranges_.clear();
  std::vector<Range> written;
  for (const Op& op : ops) {
    const BufferSpan out = recvSpan(op, rank, nranks);
    if (out.used && out.bytes > 0)
      written.emplace_back(out.pointer, out.pointer + out.bytes);
  }
  for (const Op& op : ops) {
    const BufferSpan in = sendSpan(op, rank, nranks);
    if (!in.used || in.bytes == 0) continue;
    const Range range(in.pointer, in.pointer + in.bytes);
    bool unchanged = true;
    for (const Range& out : written)
      unchanged = unchanged && !overlap(range, out);
    if (unchanged) ranges_.push_back(range);
  }
}

bool UnchangedInputs::hold(const void* data, size_t bytes) const {
  const auto* begin = static_cast<const char*>(data);
  for (const Range& range : ranges_)
    if (range.first <= begin && begin + bytes <= range.second) return true;
  return false;
}

}  // namespace hetccl
