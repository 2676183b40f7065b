#include "transport/gpu_buffers.h"

namespace hetccl {

GpuBuffers readGpuBuffers(const ParamSpec& spec) {
  const std::string choice = readChoice(spec);
  if (choice == "0") return GpuBuffers::kStaged;
  if (choice == "1") return GpuBuffers::kRequired;
  return GpuBuffers::kAuto;
}

}  // namespace hetccl
