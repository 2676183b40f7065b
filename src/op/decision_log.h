// The decision log (issue #30): with INFO on for subsystem TUNING, the
// first operation of each kind and size class that an engine of a
// communicator runs gets one line saying what the engine chose for it and
// why ("rank 0: allReduce of 64K bytes (float32): one-shot plan: ...").
// The size class is the power of two a size rounds up to, so that the
// sizes of a class share the decisions of a power-of-two threshold
// ("at most 32K"). The text comes from the code that decides; this only
// remembers what it has logged. The first check of a launch is one atomic
// load, so it costs nothing next to a launch, logged or not.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "op/kinds/op_kinds.h"
#include "op/op.h"

namespace hetccl {

class DecisionLog {
 public:
  // `rank` names the rank in every line; `about` (may be empty) ends every
  // line: what holds for all of the engine's ops (its links).
  explicit DecisionLog(int rank, std::string about = "");

  // Logs `describe()` for `op` if it is the first op of its kind and size
  // class; `describe` runs only then. Thread-safe.
  template <typename Describe>
  void note(const Op& op, Describe&& describe) {
    if (claim(op)) write(op, describe());
  }

  // The class of `bytes`: the exponent of the power of two it rounds up
  // to, at most 63 (0 for 0 and 1 byte).
  static unsigned sizeClass(size_t bytes);

 private:
  // True once per kind and size class, and only while the line would show.
  bool claim(const Op& op);
  void write(const Op& op, const std::string& why) const;

  const int rank_;
  const std::string about_;
  // Per kind, bit c: size class c was logged.
  std::array<std::atomic<uint64_t>, op_kinds::kOpKindCount> logged_;
};

// "64K bytes", "1000 bytes": sizes as the parameters spell them.
std::string bytesText(size_t bytes);

}  // namespace hetccl
