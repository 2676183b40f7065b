#include "engine/gpu/staging_layout.h"

#include <algorithm>
#include <cstdint>

#include "util/dtype.h"
#include "vendor/op_traits.h"

namespace hetccl {
namespace {

constexpr size_t kAlignment = 256;  // keeps copies and reductions aligned

size_t alignUp(size_t bytes) {
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

struct OpBuffers {
  BufferSpan send;
  BufferSpan recv;
};

OpBuffers buffersOf(const Op& op, int rank, int nranks) {
  return {sendSpan(op, rank, nranks), recvSpan(op, rank, nranks)};
}

bool overlap(const BufferSpan& a, const BufferSpan& b) {
  if (a.pointer == nullptr || b.pointer == nullptr) return false;
  return a.pointer < b.pointer + b.bytes && b.pointer < a.pointer + a.bytes;
}

// The staging of one op: the span the host op sees for each buffer.
struct Placement {
  size_t bytes;       // staging the op takes
  size_t sendOffset;  // where the send buffer starts in it
  size_t recvOffset;
};

Placement place(const OpBuffers& b) {
  if (!overlap(b.send, b.recv)) {
    size_t sendBytes = alignUp(b.send.bytes);
    return {sendBytes + alignUp(b.recv.bytes), 0, sendBytes};
  }
  // One span covering both, keeping their relative position.
  const char* low = std::min(b.send.pointer, b.recv.pointer);
  const char* high =
      std::max(b.send.pointer + b.send.bytes, b.recv.pointer + b.recv.bytes);
  return {alignUp(static_cast<size_t>(high - low)),
          static_cast<size_t>(b.send.pointer - low),
          static_cast<size_t>(b.recv.pointer - low)};
}

// A device-resident PreMulSum scalar travels with the op's staging.
size_t scalarBytes(const Op& op) {
  return op.reduce.preMultiply && op.reduce.scalarPointer != nullptr
             ? kAlignment
             : 0;
}

}  // namespace

size_t stagingBytes(const std::vector<Op>& ops, int rank, int nranks) {
  size_t total = 0;
  for (const Op& op : ops)
    total += place(buffersOf(op, rank, nranks)).bytes + scalarBytes(op);
  return total;
}

StagedOps stageOps(const std::vector<Op>& ops, int rank, int nranks,
                   char* base) {
  StagedOps staged;
  char* next = base;
  for (const Op& op : ops) {
    OpBuffers buffers = buffersOf(op, rank, nranks);
    Placement placement = place(buffers);
    Op hostOp = op;
    char* send = next + placement.sendOffset;
    char* recv = next + placement.recvOffset;
    hostOp.sendbuff = send;
    hostOp.recvbuff = recv;
    if (buffers.send.used && buffers.send.bytes > 0)
      staged.copiesIn.push_back(
          {send, buffers.send.pointer, buffers.send.bytes});
    if (buffers.recv.used && buffers.recv.bytes > 0)
      staged.copiesOut.push_back(
          {const_cast<char*>(buffers.recv.pointer), recv, buffers.recv.bytes});
    next += placement.bytes;
    if (scalarBytes(op) > 0) {
      staged.copiesIn.push_back(
          {next, op.reduce.scalarPointer, dtypeSize(op.dtype)});
      hostOp.reduce.scalarPointer = next;
      next += scalarBytes(op);
    }
    staged.hostOps.push_back(hostOp);
  }
  return staged;
}

}  // namespace hetccl
