// A named POSIX shared-memory segment mapped into this process.
#pragma once

#include <cstddef>
#include <string>

namespace hetccl {

class ShmSegment {
 public:
  // Creates (exclusively) and maps a zero-filled segment of `bytes`; the
  // name comes from uniqueSegmentName (shm_names.h).
  static ShmSegment create(const std::string& name, size_t bytes);
  // Maps an existing segment; its size must be at least `bytes`.
  static ShmSegment open(const std::string& name, size_t bytes);
  // Removes a segment's name, if it is still there (another process's
  // segment, when that process cannot any more).
  static void removeName(const std::string& name);

  ShmSegment() = default;
  ShmSegment(ShmSegment&& other) noexcept;
  ShmSegment& operator=(ShmSegment&& other) noexcept;
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;
  ~ShmSegment();

  // Removes the name; the mappings stay valid. Once every rank has mapped
  // the segment its name is no longer needed, and an unlinked segment cannot
  // leak in /dev/shm when a process dies.
  void unlink();

  void* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& name() const { return name_; }

 private:
  ShmSegment(std::string name, void* data, size_t size, bool owner)
      : name_(std::move(name)), data_(data), size_(size), owner_(owner) {}
  void release();

  std::string name_;
  void* data_ = nullptr;
  size_t size_ = 0;
  bool owner_ = false;  // created here, so unlinked here
};

}  // namespace hetccl
