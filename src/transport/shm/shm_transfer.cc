#include "transport/shm/shm_transfer.h"

namespace hetccl {

void ShmTransfer::throwIfFailed() const {
  if (!error_) return;
  throw Error(error_->code(),
              format("%s failed: %s", description().c_str(), error_->what()));
}

}  // namespace hetccl
