// Owners of what a network plugin hands out for one communicator: its
// context, its comms (listen, send, receive) and its memory registrations.
// Each gives its handle back to the plugin when it goes, so that no path
// out of the transport, a failure included, leaks one. A comm outlives the
// registrations made on it (declare them after it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "transport/net/net_library.h"
#include "util/owned_fd.h"

namespace hetccl {

class NetContext {
 public:
  // The plugin's init for communicator `commId`; throws like
  // NetLibrary::check.
  NetContext(const NetLibrary& library, uint64_t commId);
  ~NetContext();
  NetContext(const NetContext&) = delete;
  NetContext& operator=(const NetContext&) = delete;

  const NetLibrary& library() const { return library_; }
  hetcclNetContext* get() const { return context_; }

 private:
  const NetLibrary& library_;
  hetcclNetContext* context_;
};

class NetComm {
 public:
  enum class Kind { kListen, kSend, kReceive };

  NetComm() = default;
  NetComm(const NetContext& context, Kind kind, void* comm)
      : context_(&context), kind_(kind), comm_(comm) {}
  NetComm(NetComm&& other) noexcept { *this = std::move(other); }
  NetComm& operator=(NetComm&& other) noexcept;
  ~NetComm() { close(); }

  void* get() const { return comm_; }
  explicit operator bool() const { return comm_ != nullptr; }
  // Closes it now (a failure is logged: nothing waits on it any more).
  void close();

 private:
  const NetContext* context_ = nullptr;
  Kind kind_ = Kind::kSend;
  void* comm_ = nullptr;
};

// Where a transfer's buffer is, for its registration: host memory, GPU
// memory the plugin maps itself (NCCL_PTR_CUDA), or GPU memory through a
// DMA-BUF descriptor of its allocation, shared by the transfer's shares
// (`dmaBufOffset`: where the buffer starts in it).
struct NetMemory {
  int pointerType = HETCCL_NET_MODULE_PTR_HOST;
  std::shared_ptr<const OwnedFd> dmaBuf;
  uint64_t dmaBufOffset = 0;

  // The same memory `bytes` further on.
  NetMemory advancedBy(size_t bytes) const {
    return {pointerType, dmaBuf, dmaBuf ? dmaBufOffset + bytes : 0};
  }
};

class NetRegistration {
 public:
  NetRegistration() = default;
  // Registers `bytes` at `data` with `comm` (regMr, or regMrDmaBuf where
  // `memory` has a descriptor); throws like NetLibrary::check (a plugin
  // that refuses the memory).
  NetRegistration(const NetContext& context, void* comm, void* data,
                  size_t bytes, const NetMemory& memory = {});
  NetRegistration(NetRegistration&& other) noexcept {
    *this = std::move(other);
  }
  NetRegistration& operator=(NetRegistration&& other) noexcept;
  ~NetRegistration() { release(); }

  void* handle() const { return handle_; }

 private:
  void release();

  const NetContext* context_ = nullptr;
  void* comm_ = nullptr;
  void* handle_ = nullptr;
};

}  // namespace hetccl
