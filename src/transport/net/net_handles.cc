#include "transport/net/net_handles.h"

#include <utility>

#include "util/log.h"

namespace hetccl {
namespace {

// A close that fails has nobody left to tell but the log.
void logFailure(const NetLibrary& library, int result, const char* call) {
  if (result != 0)
    LOG_INFO(kLogNet, "%s", library.failure(result, call).what());
}

}  // namespace

NetContext::NetContext(const NetLibrary& library, uint64_t commId)
    : library_(library), context_(library.init(commId)) {}

NetContext::~NetContext() {
  logFailure(library_, library_.table().finalize(context_), "finalize");
}

NetComm& NetComm::operator=(NetComm&& other) noexcept {
  if (this != &other) {
    close();
    context_ = other.context_;
    kind_ = other.kind_;
    comm_ = std::exchange(other.comm_, nullptr);
  }
  return *this;
}

void NetComm::close() {
  if (comm_ == nullptr) return;
  const NetLibrary& library = context_->library();
  const hetcclNetModuleTable& table = library.table();
  void* comm = std::exchange(comm_, nullptr);
  switch (kind_) {
    case Kind::kListen:
      return logFailure(library, table.closeListen(context_->get(), comm),
                        "closeListen");
    case Kind::kSend:
      return logFailure(library, table.closeSend(context_->get(), comm),
                        "closeSend");
    case Kind::kReceive:
      return logFailure(library, table.closeRecv(context_->get(), comm),
                        "closeRecv");
  }
}

NetRegistration::NetRegistration(const NetContext& context, void* comm,
                                 void* data, size_t bytes,
                                 const NetMemory& memory)
    : context_(&context), comm_(comm) {
  const hetcclNetModuleTable& table = context.library().table();
  if (memory.dmaBuf)
    context.library().check(
        table.regMrDmaBuf(context.get(), comm, data, bytes, memory.pointerType,
                          memory.dmaBufOffset, memory.dmaBuf->get(), &handle_),
        "regMrDmaBuf");
  else
    context.library().check(table.regMr(context.get(), comm, data, bytes,
                                        memory.pointerType, &handle_),
                            "regMr");
}

NetRegistration& NetRegistration::operator=(NetRegistration&& other) noexcept {
  if (this != &other) {
    release();
    context_ = other.context_;
    comm_ = other.comm_;
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

void NetRegistration::release() {
  if (handle_ == nullptr) return;
  const NetLibrary& library = context_->library();
  logFailure(library,
             library.table().deregMr(context_->get(), comm_,
                                     std::exchange(handle_, nullptr)),
             "deregMr");
}

}  // namespace hetccl
