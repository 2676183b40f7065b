#include "vendor/op.h"

namespace hetccl {

const char* opKindName(OpKind kind) {
  switch (kind) {
    case OpKind::AllReduce:
      return "AllReduce";
    case OpKind::Broadcast:
      return "Broadcast";
    case OpKind::Reduce:
      return "Reduce";
    case OpKind::AllGather:
      return "AllGather";
    case OpKind::ReduceScatter:
      return "ReduceScatter";
    case OpKind::AlltoAll:
      return "AlltoAll";
    case OpKind::Gather:
      return "Gather";
    case OpKind::Scatter:
      return "Scatter";
    case OpKind::Send:
      return "Send";
    case OpKind::Recv:
      return "Recv";
  }
  return "unknown";
}

}  // namespace hetccl
