#include "shm/shm_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "util/error.h"
#include "util/log.h"
#include "util/owned_fd.h"

namespace hetccl {
namespace {

void* mapShared(int fd, size_t bytes, const std::string& name) {
  void* data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (data == MAP_FAILED)
    failErrno("cannot map shared segment %s (%zu bytes)", name.c_str(), bytes);
  return data;
}

}  // namespace

ShmSegment ShmSegment::create(const std::string& name, size_t bytes) {
  // The descriptor closes on every path; the mapping outlives it.
  OwnedFd fd(shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600));
  if (!fd.valid()) failErrno("cannot create shared segment %s", name.c_str());
  if (ftruncate(fd.get(), static_cast<off_t>(bytes)) != 0) {
    int saved = errno;
    shm_unlink(name.c_str());
    errno = saved;
    failErrno(
        "cannot size shared segment %s to %zu bytes (is /dev/shm "
        "large enough?)",
        name.c_str(), bytes);
  }
  // Touch every page now so that a full /dev/shm fails here, with a
  // message, rather than with SIGBUS in the middle of a collective.
  if (posix_fallocate(fd.get(), 0, static_cast<off_t>(bytes)) != 0) {
    shm_unlink(name.c_str());
    fail(ncclSystemError,
         "cannot reserve %zu bytes for shared segment %s: /dev/shm is full",
         bytes, name.c_str());
  }
  void* data = mapShared(fd.get(), bytes, name);
  LOG_TRACE(kLogShm, "created %s (%zu bytes)", name.c_str(), bytes);
  return ShmSegment(name, data, bytes, true);
}

void ShmSegment::removeName(const std::string& name) {
  if (shm_unlink(name.c_str()) == 0)
    LOG_INFO(kLogShm, "removed the name %s a failed peer left", name.c_str());
}

ShmSegment ShmSegment::open(const std::string& name, size_t bytes) {
  OwnedFd fd(shm_open(name.c_str(), O_RDWR, 0600));
  if (!fd.valid()) failErrno("cannot open shared segment %s", name.c_str());
  struct stat info {};
  if (fstat(fd.get(), &info) != 0)
    failErrno("cannot stat shared segment %s", name.c_str());
  if (static_cast<size_t>(info.st_size) < bytes)
    fail(ncclInternalError, "shared segment %s has %lld bytes, expected %zu",
         name.c_str(), static_cast<long long>(info.st_size), bytes);
  return ShmSegment(name, mapShared(fd.get(), bytes, name), bytes, false);
}

ShmSegment::ShmSegment(ShmSegment&& other) noexcept {
  *this = std::move(other);
}

ShmSegment& ShmSegment::operator=(ShmSegment&& other) noexcept {
  if (this != &other) {
    release();
    name_ = std::move(other.name_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    owner_ = std::exchange(other.owner_, false);
  }
  return *this;
}

ShmSegment::~ShmSegment() { release(); }

void ShmSegment::unlink() {
  if (owner_) shm_unlink(name_.c_str());
  owner_ = false;
}

void ShmSegment::release() {
  unlink();
  if (data_ != nullptr) munmap(data_, size_);
  data_ = nullptr;
}

}  // namespace hetccl
