#include "transport/ucx/ucx_settings.h"

namespace hetccl {
namespace {

UcxGpuBuffers readUcxGpuBuffers() {
  const std::string choice = readChoice(kUcxGpu);
  if (choice == "0") return UcxGpuBuffers::kStaged;
  if (choice == "1") return UcxGpuBuffers::kRequired;
  return UcxGpuBuffers::kAuto;
}

}  // namespace

UcxSettings UcxSettings::fromEnvironment() {
  UcxSettings s;
  s.lanes = static_cast<int>(readInteger(kUcxLanes));
  s.partBytes = readBytes(kUcxPart);
  s.gpu = readUcxGpuBuffers();
  return s;
}

}  // namespace hetccl
