// HETCCL_PROXY_TRACE's file: a header, then one line per piece with its
// way, number, bytes, call and three times; pieces past kMaxPieces are
// counted and said in a last line instead of kept; a path that cannot be
// written is logged, not thrown, when the trace goes.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "engine/gpu/proxy/proxy_trace.h"

namespace hetccl {
namespace {

std::vector<std::string> linesOf(const std::string& path) {
  std::ifstream file(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(file, line);) lines.push_back(line);
  return lines;
}

ProxyTrace::Piece piece(bool send, uint64_t number, uint64_t sequence) {
  ProxyTrace::Piece p;
  p.send = send;
  p.number = number;
  p.bytes = 4096;
  p.call.sequence = sequence;
  p.call.call = send ? OpKind::AllReduce : OpKind::Recv;
  const auto origin = ProxyTrace::Clock::time_point{};
  p.adopted = origin + std::chrono::microseconds(10);
  p.posted = origin + std::chrono::microseconds(25);
  p.done = origin + std::chrono::microseconds(125);
  return p;
}

TEST(ProxyTrace, WritesALinePerPieceWhenItGoes) {
  const std::string path = ::testing::TempDir() + "/proxy-trace-lines";
  {
    ProxyTrace trace(path);
    trace.add(piece(true, 7, 3));
    trace.add(piece(false, 8, 2));
  }
  const std::vector<std::string> lines = linesOf(path);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0].rfind("# ", 0), 0u);
  EXPECT_EQ(lines[1], "# way piece bytes call sequence adopted posted done");
  EXPECT_EQ(lines[2], "send 7 4096 AllReduce 3 10 25 125");
  EXPECT_EQ(lines[3], "recv 8 4096 Recv 2 10 25 125");
  std::remove(path.c_str());
}

TEST(ProxyTrace, CountsWhatItDoesNotKeep) {
  const std::string path = ::testing::TempDir() + "/proxy-trace-cap";
  {
    ProxyTrace trace(path);
    for (size_t i = 0; i < ProxyTrace::kMaxPieces + 3; ++i)
      trace.add(piece(true, i, 1));
    EXPECT_EQ(trace.pieces().size(), ProxyTrace::kMaxPieces);
    EXPECT_EQ(trace.notKept(), 3u);
  }
  const std::vector<std::string> lines = linesOf(path);
  ASSERT_EQ(lines.size(), ProxyTrace::kMaxPieces + 3);
  EXPECT_EQ(lines.back(), "# 3 later pieces not kept");
  std::remove(path.c_str());
}

TEST(ProxyTrace, AnUnwritablePathIsNotAnError) {
  EXPECT_NO_THROW({
    ProxyTrace trace("/nonexistent-directory/proxy-trace");
    trace.add(piece(true, 0, 1));
  });
}

}  // namespace
}  // namespace hetccl
