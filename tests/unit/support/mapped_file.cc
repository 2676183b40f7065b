#include "support/mapped_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

namespace hetccl {

namespace {
constexpr size_t kPage = 4096;
}  // namespace

MappedFile::MappedFile(const std::string& path) : mapping_(MAP_FAILED) {
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  EXPECT_GE(fd, 0) << path;
  if (fd < 0) return;
  EXPECT_EQ(ftruncate(fd, kPage), 0);
  mapping_ = mmap(nullptr, kPage, PROT_READ, MAP_PRIVATE, fd, 0);
  EXPECT_NE(mapping_, MAP_FAILED);
  close(fd);
}

MappedFile::~MappedFile() {
  if (mapping_ != MAP_FAILED) munmap(mapping_, kPage);
}

}  // namespace hetccl
