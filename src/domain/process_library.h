// A vendor library loaded once per process: a library handle is process-wide
// by nature, and NCCL cannot be unloaded cleanly.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>

namespace hetccl {

template <typename Library>
class ProcessLibrary {
 public:
  // Loads the library on first use (Library::load()); throws if there is
  // none, and tries again on the next call.
  const Library& get() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!library_) {
      library_ = Library::load();
      loaded_.store(library_.get(), std::memory_order_release);
    }
    return *library_;
  }
  // The library if it is loaded, else null; never loads, never blocks.
  const Library* loaded() const {
    return loaded_.load(std::memory_order_acquire);
  }

 private:
  std::mutex mutex_;
  std::unique_ptr<Library> library_;
  std::atomic<const Library*> loaded_{nullptr};
};

}  // namespace hetccl
