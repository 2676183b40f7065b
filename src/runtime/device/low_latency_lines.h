// The line format of the low-latency all-reduce (device_module.h: data and
// flag in one 8-byte store), shared by its kernel (device_kernels.h) and by
// the emulated device module, so that both read and write the same lines.
//
// A buffer is cut into units of 8 bytes; unit u travels in lines 2u (its
// low 4 bytes) and 2u + 1 (its high 4 bytes) of the half of the area that
// the operation uses.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "util/float_formats.h"  // HETCCL_HOST_DEVICE

namespace hetccl {
namespace lowlatency {

constexpr size_t kUnitBytes = 8;

HETCCL_HOST_DEVICE inline size_t unitsOf(size_t bytes) {
  return (bytes + kUnitBytes - 1) / kUnitBytes;
}

// Lines that one half of an area needs for `bytes` of payload.
HETCCL_HOST_DEVICE inline size_t linesFor(size_t bytes) {
  return 2 * unitsOf(bytes);
}

// The flag of the operation that `done` operations came before. Never 0,
// the value of lines never written, and different from the flag of the
// operation two before, which wrote the same half: 0xFFFFFFFF flags go
// round while the halves alternate.
HETCCL_HOST_DEVICE inline uint32_t flagOf(uint64_t done) {
  return uint32_t(done % 0xFFFFFFFFu) + 1;
}

// The half of every area that the operation uses.
HETCCL_HOST_DEVICE inline size_t halfOf(uint64_t done) { return done & 1; }

HETCCL_HOST_DEVICE inline uint64_t makeLine(uint32_t data, uint32_t flag) {
  return uint64_t(flag) << 32 | data;
}

HETCCL_HOST_DEVICE inline uint32_t flagOfLine(uint64_t line) {
  return uint32_t(line >> 32);
}

HETCCL_HOST_DEVICE inline uint32_t dataOfLine(uint64_t line) {
  return uint32_t(line);
}

// The units [*first, *end) that block `block` of `blocks` carries.
HETCCL_HOST_DEVICE inline void unitsOfBlock(size_t units, unsigned block,
                                            unsigned blocks, size_t* first,
                                            size_t* end) {
  const size_t perBlock = (units + blocks - 1) / blocks;
  const size_t begin = perBlock * block;
  *first = begin < units ? begin : units;
  *end = begin + perBlock < units ? begin + perBlock : units;
}

}  // namespace lowlatency
}  // namespace hetccl
