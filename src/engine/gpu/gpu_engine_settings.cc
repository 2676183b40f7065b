#include "engine/gpu/gpu_engine_settings.h"

namespace hetccl {

GpuEngineSettings GpuEngineSettings::fromEnvironment() {
  GpuEngineSettings s;
  s.direct = readFlag(kGpuDirect);
  s.stallSteps = readFlag(kStallSteps);
  s.chunkBytes = readBytes(kGpuChunk);
  s.lowLatencyMaxBytes = readBytes(kGpuLowLatencyMax);
  s.stagedLowLatencyMaxBytes = readBytes(kStagedLowLatencyMax);
  s.stagedCopyPieces = static_cast<size_t>(readInteger(kStagedCopyPieces));
  s.stagedRunsFrom = static_cast<uint64_t>(readInteger(kStagedRunsFrom));
  s.stagingStreams = static_cast<size_t>(readInteger(kStagingStreams));
  s.proxyTrace = readString(kProxyTrace).value_or("");
  return s;
}

}  // namespace hetccl
