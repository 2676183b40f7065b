#include "engine/gpu/staged_link.h"

namespace hetccl {
namespace {

// A receive into a slot, copied to the GPU on the first wait (or done())
// that sees it arrived.
class StagedReceive : public TransferRequest {
 public:
  StagedReceive(std::shared_ptr<TransferRequest> onLink, char* slot,
                void* target, size_t bytes, const StagingPath& path)
      : onLink_(std::move(onLink)),
        slot_(slot),
        target_(target),
        bytes_(bytes),
        path_(path) {}

  bool done() override {
    if (!copied_ && onLink_->done()) copyToDevice();
    return copied_;
  }
  void wait(const AbortSignal& abort, double timeoutSeconds) override {
    if (copied_) return;
    onLink_->wait(abort, timeoutSeconds);
    copyToDevice();
  }

 private:
  void copyToDevice() {
    if (bytes_ > 0)
      path_.module.check(
          path_.module.api().copyAsync(target_, slot_, bytes_, path_.stream),
          "copying received bytes to the GPU");
    path_.pool.release(slot_, path_.progress.mark());
    copied_ = true;
  }

  std::shared_ptr<TransferRequest> onLink_;
  char* slot_;
  void* target_;
  size_t bytes_;
  StagingPath path_;
  bool copied_ = false;
};

}  // namespace

std::shared_ptr<TransferRequest> StagedLink::send(const void* data,
                                                  size_t bytes) {
  char* slot = path_.pool.acquire(bytes, path_.abort, path_.timeoutSeconds);
  if (bytes > 0)
    path_.module.check(
        path_.module.api().copyAsync(slot, data, bytes, path_.stream),
        "copying bytes to send from the GPU");
  return path_.proxy.post(*link_, slot, bytes, path_.progress.mark());
}

std::shared_ptr<TransferRequest> StagedLink::recv(void* data, size_t bytes) {
  char* slot = path_.pool.acquire(bytes, path_.abort, path_.timeoutSeconds);
  return std::make_shared<StagedReceive>(link_->recv(slot, bytes), slot, data,
                                         bytes, path_);
}

}  // namespace hetccl
