#include "engine/gpu/staging_layout.h"

#include <algorithm>
#include <cstdint>

#include "util/dtype.h"

namespace hetccl {
namespace {

constexpr size_t kAlignment = 256;  // keeps copies and reductions aligned

size_t alignUp(size_t bytes) {
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

// One user buffer of an op: its size, and whether this rank reads
// (send side) or writes (receive side) it.
struct Buffer {
  const char* pointer;
  size_t bytes;
  bool used;
};

struct OpBuffers {
  Buffer send;
  Buffer recv;
};

// NCCL's buffer sizes per collective, in elements of `count` (the per-rank
// count as Op defines it), and which ranks touch them.
OpBuffers buffersOf(const Op& op, int rank, int nranks) {
  const size_t element = dtypeSize(op.dtype);
  const size_t one = op.count * element;
  const size_t all = one * static_cast<size_t>(nranks);
  const bool root = rank == op.root;
  auto send = [&](size_t bytes, bool used) {
    return Buffer{static_cast<const char*>(op.sendbuff), bytes, used};
  };
  auto recv = [&](size_t bytes, bool used) {
    return Buffer{static_cast<const char*>(op.recvbuff), bytes, used};
  };
  switch (op.kind) {
    case OpKind::AllReduce:
      return {send(one, true), recv(one, true)};
    case OpKind::Broadcast:
      return {send(one, root), recv(one, true)};
    case OpKind::Reduce:
      return {send(one, true), recv(one, root)};
    case OpKind::AllGather:
      return {send(one, true), recv(all, true)};
    case OpKind::ReduceScatter:
      return {send(all, true), recv(one, true)};
    case OpKind::AlltoAll:
      return {send(all, true), recv(all, true)};
    case OpKind::Gather:
      return {send(one, true), recv(all, root)};
    case OpKind::Scatter:
      return {send(all, root), recv(one, true)};
    case OpKind::Send:
      return {send(one, true), recv(0, false)};
    case OpKind::Recv:
      return {send(0, false), recv(one, true)};
  }
  return {};
}

bool overlap(const Buffer& a, const Buffer& b) {
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
