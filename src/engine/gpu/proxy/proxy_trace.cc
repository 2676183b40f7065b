#include "engine/gpu/proxy/proxy_trace.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "op/op_traits.h"
#include "util/log.h"

namespace hetccl {
namespace {

long long microseconds(ProxyTrace::Clock::time_point at) {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             at.time_since_epoch())
      .count();
}

struct FileCloser {
  void operator()(FILE* file) const { std::fclose(file); }
};

}  // namespace

ProxyTrace::ProxyTrace(std::string path) : path_(std::move(path)) {}

ProxyTrace::~ProxyTrace() { write(); }

void ProxyTrace::add(const Piece& piece) {
  if (pieces_.size() == kMaxPieces) {
    ++notKept_;
    return;
  }
  pieces_.push_back(piece);
}

void ProxyTrace::write() const {
  std::unique_ptr<FILE, FileCloser> file(std::fopen(path_.c_str(), "w"));
  if (!file) {
    LOG_WARN(kLogInit, "HETCCL_PROXY_TRACE: could not write %s: %s",
             path_.c_str(), std::strerror(errno));
    return;
  }
  std::fprintf(file.get(),
               "# HetCCL staging proxy trace: one line per piece; times in "
               "microseconds of the steady clock\n"
               "# way piece bytes call sequence adopted posted done\n");
  for (const Piece& piece : pieces_)
    std::fprintf(file.get(), "%s %llu %zu %s %llu %lld %lld %lld\n",
                 piece.send ? "send" : "recv",
                 static_cast<unsigned long long>(piece.number), piece.bytes,
                 opKindName(piece.call.call),
                 static_cast<unsigned long long>(piece.call.sequence),
                 microseconds(piece.adopted), microseconds(piece.posted),
                 microseconds(piece.done));
  if (notKept_ > 0)
    std::fprintf(file.get(), "# %zu later pieces not kept\n", notKept_);
  LOG_INFO(kLogInit, "HETCCL_PROXY_TRACE: %zu pieces written to %s",
           pieces_.size(), path_.c_str());
}

}  // namespace hetccl
