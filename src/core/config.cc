#include "core/config.h"

#include <cstddef>

#include "core/settings.h"
#include "util/error.h"

namespace hetccl {
namespace {

// True if a caller's struct of `size` bytes contains `field`.
#define CONFIG_HAS(size, field) \
  ((size) >= offsetof(ncclConfig_t, field) + sizeof(ncclConfig_t::field))

}  // namespace

CommConfig CommConfig::fromUser(const ncclConfig_t* config) {
  CommConfig out;
  out.blocking = readFlag(kCommBlocking);
  if (config == nullptr) return out;
  if (config->magic != NCCL_CONFIG_MAGIC)
    fail(ncclInvalidArgument,
         "config is not an ncclConfig_t (magic 0x%x, expected 0x%x): "
         "initialise it with NCCL_CONFIG_INITIALIZER",
         config->magic, NCCL_CONFIG_MAGIC);
  size_t size = config->size;
  if (size < offsetof(ncclConfig_t, blocking))
    fail(ncclInvalidArgument, "config size %zu is too small", size);
  if (CONFIG_HAS(size, blocking) && config->blocking != NCCL_CONFIG_UNDEF_INT) {
    if (config->blocking != 0 && config->blocking != 1)
      fail(ncclInvalidArgument, "config.blocking must be 0 or 1, not %d",
           config->blocking);
    out.blocking = config->blocking == 1;
  }
  if (CONFIG_HAS(size, commName) && config->commName != nullptr)
    out.name = config->commName;
  if (CONFIG_HAS(size, splitShare) &&
      config->splitShare != NCCL_CONFIG_UNDEF_INT)
    out.splitShare = config->splitShare;
  return out;
}

}  // namespace hetccl
