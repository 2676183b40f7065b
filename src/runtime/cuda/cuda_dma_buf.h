// DMA-BUF export of CUDA device memory (cuMemGetHandleForAddressRange), for
// network plugins that register GPU memory through a file descriptor
// (regMrDmaBuf) instead of the peer-memory kernel module.
#pragma once

#include <stdint.h>

namespace hetccl {
namespace cuda {

// *supported = 1 when the current device and its driver export DMA-BUF.
int dmaBufSupported(int* supported);

// A DMA-BUF file descriptor of the allocation that holds `pointer` (its
// range widened to whole host pages, as the driver requires) and
// `pointer`'s offset in it; the caller closes the descriptor.
int exportDmaBuf(const void* pointer, int* fd, uint64_t* offset);

}  // namespace cuda
}  // namespace hetccl
