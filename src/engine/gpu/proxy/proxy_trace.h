// HETCCL_PROXY_TRACE: every piece the staging proxy moved, with when the
// engine handed it over, when the proxy posted it on the link and when it
// saw it done, written to a file when the communicator goes. The engine's
// timeline (HETCCL_ENGINE_TIMELINE) sums where the time went; the trace
// shows the order behind it: which piece waited for which, and where a
// direction of a link stood idle (bench/proxy_trace.py reads it).
//
// Only the proxy's thread adds pieces; the file is written once that
// thread has stopped.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "op/call_signature.h"

namespace hetccl {

class ProxyTrace {
 public:
  using Clock = std::chrono::steady_clock;

  // Pieces past this many are counted, not kept (about 64 bytes each).
  static constexpr size_t kMaxPieces = size_t{1} << 20;

  struct Piece {
    bool send = false;
    uint64_t number = 0;  // the piece's number in its ring
    size_t bytes = 0;
    CallSignature call;
    Clock::time_point adopted;  // handed to the proxy
    Clock::time_point posted;   // posted on the link
    Clock::time_point done;     // seen done by the proxy
  };

  // `path`: the file written when the trace goes.
  explicit ProxyTrace(std::string path);
  // Writes the file; a file that cannot be written is logged, not thrown.
  ~ProxyTrace();
  ProxyTrace(const ProxyTrace&) = delete;
  ProxyTrace& operator=(const ProxyTrace&) = delete;

  void add(const Piece& piece);
  const std::vector<Piece>& pieces() const { return pieces_; }
  size_t notKept() const { return notKept_; }

 private:
  void write() const;

  const std::string path_;
  std::vector<Piece> pieces_;
  size_t notKept_ = 0;
};

}  // namespace hetccl
