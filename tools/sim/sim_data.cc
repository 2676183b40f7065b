#include "sim_data.h"

#include <algorithm>

#include "util/dtype.h"

namespace hetccl::sim {

char* fakeAddress(int region) {
  // 1 TiB apart: room for any buffer a plan offsets into.
  return reinterpret_cast<char*>((uintptr_t{1} << 44) +
                                 (uintptr_t(region) << 40));
}

void SimData::reduce(void*, const void* const*, int nsources, size_t count,
                     const Reduction& reduction) {
  // Each source read once, the result written once.
  spend(static_cast<double>(count * dtypeSize(reduction.dtype)) *
        (nsources + 1));
}

void SimData::copy(void*, const void*, size_t bytes) {
  spend(2.0 * static_cast<double>(bytes));
}

char* SimData::scratch(size_t bytes) {
  scratchBytes_ = std::max(scratchBytes_, bytes);
  return fakeAddress(3);
}

void SimData::spend(double bytesMoved) {
  const double seconds = bytesMoved / rate_;
  busySeconds_ += seconds;
  if (stream_ == nullptr) return scheduler_.sleepFor(seconds);
  stream_->enqueue([this, seconds] { scheduler_.sleepFor(seconds); });
}

}  // namespace hetccl::sim
