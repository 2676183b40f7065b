// How PiecedLink cuts transfers: at most a slot's worth per piece, four
// pieces for transfers of less than four slots (none under 256 KiB), none
// for an empty transfer, and each piece at its offset of the buffer (and
// of the local buffer of a combining receive).
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "algo/pieced_link.h"
#include "support/test_call.h"

namespace hetccl {
namespace {

class DoneRequest : public TransferRequest {
 public:
  bool done() override { return true; }
  void wait(const AbortSignal&, double) override {}
};

// Records the transfers posted on it: (offset into the caller's buffer,
// bytes), and the calls they belong to.
class RecordingLink : public Link {
 public:
  explicit RecordingLink(const char* base) : base_(base) {}
  int peer() const override { return 1; }
  std::shared_ptr<TransferRequest> send(const void* data, size_t bytes,
                                        const CallSignature& call,
                                        TransferPiece piece = {}) override {
    posted.emplace_back(static_cast<const char*>(data) - base_, bytes);
    calls.push_back(call);
    return std::make_shared<DoneRequest>();
  }
  std::shared_ptr<TransferRequest> recv(void* data, size_t bytes,
                                        const CallSignature& call,
                                        TransferPiece piece = {}) override {
    return send(data, bytes, call);
  }
  bool reducesOnReceive() const override { return true; }
  // Records the destination's offset, and the local buffer's beside it.
  std::shared_ptr<TransferRequest> recvReduce(
      void* dst, const void* local, size_t bytes, const ReceiveCombine& combine,
      const CallSignature& call, TransferPiece piece = {}) override {
    localOffsets.push_back(static_cast<const char*>(local) - base_);
    combines.push_back(combine);
    return send(dst, bytes, call);
  }
  size_t bytesSent() const override { return 0; }
  size_t bytesReceived() const override { return 0; }

  std::vector<std::pair<size_t, size_t>> posted;
  std::vector<CallSignature> calls;
  std::vector<size_t> localOffsets;
  std::vector<ReceiveCombine> combines;

 private:
  const char* base_;
};

// A link that moves nothing and combines nothing on receive.
class DoneLink : public Link {
 public:
  int peer() const override { return 1; }
  std::shared_ptr<TransferRequest> send(const void*, size_t,
                                        const CallSignature&,
                                        TransferPiece piece = {}) override {
    return std::make_shared<DoneRequest>();
  }
  std::shared_ptr<TransferRequest> recv(void*, size_t, const CallSignature&,
                                        TransferPiece piece = {}) override {
    return std::make_shared<DoneRequest>();
  }
  size_t bytesSent() const override { return 0; }
  size_t bytesReceived() const override { return 0; }
};

std::vector<std::pair<size_t, size_t>> piecesOf(size_t bytes,
                                                size_t pieceBytes) {
  static char buffer[1];
  auto inner = std::make_shared<RecordingLink>(buffer);
  PiecedLink link(inner, pieceBytes);
  link.send(buffer, bytes, kTestCall);
  auto sent = inner->posted;
  inner->posted.clear();
  link.recv(buffer, bytes, kTestCall);
  EXPECT_EQ(inner->posted, sent) << "receives are cut like sends";
  return sent;
}

using Pieces = std::vector<std::pair<size_t, size_t>>;

TEST(PiecedLink, LargeTransfersGoInSlotSizedPieces) {
  const size_t mib = 1 << 20;
  EXPECT_EQ(piecesOf(5 * mib + 3, mib), (Pieces{{0, mib},
                                                {mib, mib},
                                                {2 * mib, mib},
                                                {3 * mib, mib},
                                                {4 * mib, mib},
                                                {5 * mib, 3}}));
}

TEST(PiecedLink, SmallerTransfersGoInFourPieces) {
  const size_t mib = 1 << 20;
  EXPECT_EQ(piecesOf(mib, 4 * mib), (Pieces{{0, mib / 4},
                                            {mib / 4, mib / 4},
                                            {mib / 2, mib / 4},
                                            {3 * mib / 4, mib / 4}}));
  // Quarters are rounded up to pages: the last piece is shorter.
  EXPECT_EQ(piecesOf(2000001, 4 * mib), (Pieces{{0, 503808},
                                                {503808, 503808},
                                                {1007616, 503808},
                                                {1511424, 488577}}));
}

TEST(PiecedLink, NoPieceUnder256KiBUnlessTheSlotIsSmaller) {
  EXPECT_EQ(piecesOf(600000, 1 << 20),
            (Pieces{{0, 262144}, {262144, 262144}, {524288, 75712}}));
  EXPECT_EQ(piecesOf(1000, 1 << 20), (Pieces{{0, 1000}}));
  EXPECT_EQ(piecesOf(10000, 4096),
            (Pieces{{0, 4096}, {4096, 4096}, {8192, 1808}}));
}

TEST(PiecedLink, EmptyTransfersAreNotSent) {
  EXPECT_TRUE(piecesOf(0, 1 << 20).empty());
}

// A combining receive is cut like a plain one, each piece's local buffer
// at the same offset as its destination, each with the same combination;
// whether the link combines at all is the inner link's.
TEST(PiecedLink, CombiningReceivesAreCutLikeReceives) {
  static char buffer[1];
  auto inner = std::make_shared<RecordingLink>(buffer);
  PiecedLink link(inner, 4096);
  EXPECT_TRUE(link.reducesOnReceive());
  Reduction max{ncclInt32, ncclMax};
  link.recvReduce(buffer + 8, buffer + 100, 10000, {max, true}, kTestCall);
  EXPECT_EQ(inner->posted, (Pieces{{8, 4096}, {4104, 4096}, {8200, 1808}}));
  EXPECT_EQ(inner->localOffsets, (std::vector<size_t>{100, 4196, 8292}));
  ASSERT_EQ(inner->combines.size(), 3u);
  for (const ReceiveCombine& combine : inner->combines) {
    EXPECT_EQ(combine.reduction.op, ncclMax);
    EXPECT_TRUE(combine.incomingFirst);
  }
  PiecedLink plain(std::make_shared<DoneLink>(), 4096);
  EXPECT_FALSE(plain.reducesOnReceive());
}

// The receiving end compares each piece's call with its own.
TEST(PiecedLink, EveryPieceCarriesItsCall) {
  static char buffer[1];
  auto inner = std::make_shared<RecordingLink>(buffer);
  PiecedLink link(inner, 4096);
  CallSignature call;
  call.sequence = 17;
  call.count = 2500;
  call.dtype = ncclFloat32;
  call.redOp = ncclMax;
  link.send(buffer, 10000, call);
  link.recv(buffer, 10000, call);
  ASSERT_EQ(inner->calls.size(), 6u);
  for (const CallSignature& carried : inner->calls)
    EXPECT_TRUE(callsAgree(carried, call)) << describeCall(carried);
}

}  // namespace
}  // namespace hetccl
