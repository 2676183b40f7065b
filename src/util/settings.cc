#include "util/settings.h"

#include "util/params.h"

namespace hetccl {
namespace {

// Every Size parameter is bounded by at most 1 GiB in
// params.def, so these narrowings are exact.
size_t readBytes(Param param) {
  return static_cast<size_t>(readInteger(param));
}

UcxGpuBuffers readUcxGpuBuffers() {
  const std::string choice = readChoice(Param::UcxGpu);
  if (choice == "0") return UcxGpuBuffers::kStaged;
  if (choice == "1") return UcxGpuBuffers::kRequired;
  return UcxGpuBuffers::kAuto;
}

// From the table, not field by field: a parameter declared Same is
// compared across ranks without code of its own.
std::vector<SettingValue> readMustAgree() {
  std::vector<SettingValue> values;
  for (const ParamSpec& spec : allParams())
    if (spec.scope == ParamScope::Same)
      values.push_back({spec.id, readCanonical(spec.id)});
  return values;
}

}  // namespace

Settings Settings::fromEnvironment() {
  Settings s;
  s.bootstrapTimeoutSeconds = readSeconds(Param::BootstrapTimeout);
  s.timeoutSeconds = readSeconds(Param::Timeout);
  s.transport = readString(Param::Transport).value_or("");
  s.hostId = readString(Param::HostId);
  s.domains = readString(Param::Domains).value_or("");
  s.chunkBytes = readBytes(Param::Chunk);
  s.oneShotMaxBytes = readBytes(Param::OneShotMax);
  s.shmChunkBytes = readBytes(Param::ShmChunk);
  s.shmP2pChunkBytes = readBytes(Param::ShmP2pChunk);
  s.shmDirectReduceMax = readBytes(Param::ShmDirectReduceMax);
  s.shmLinkSlots = static_cast<size_t>(readInteger(Param::ShmLinkSlots));
  s.shmLinkChunkBytes = readBytes(Param::ShmLinkChunk);
  s.tcpSocketsPerLink = static_cast<int>(readInteger(Param::TcpSockets));
  s.tcpThreads = static_cast<int>(readInteger(Param::TcpThreads));
  s.tcpPollMicroseconds = static_cast<int>(readInteger(Param::TcpPollUs));
  s.tcpStripeBytes = readBytes(Param::TcpChunk);
  s.tcpSocketBufferBytes = static_cast<int>(readInteger(Param::TcpBuffer));
  s.ucxLanes = static_cast<int>(readInteger(Param::UcxLanes));
  s.ucxPartBytes = readBytes(Param::UcxPart);
  s.ucxGpu = readUcxGpuBuffers();
  s.gpuDirect = readFlag(Param::GpuDirect);
  s.checkCalls = readFlag(Param::CheckCalls);
  s.engineTimeline = readFlag(Param::EngineTimeline);
  s.scriptedLaunches = readFlag(Param::ScriptedLaunches);
  s.gpuChunkBytes = readBytes(Param::GpuChunk);
  s.gpuLowLatencyMaxBytes = readBytes(Param::GpuLowLatencyMax);
  s.mustAgree = readMustAgree();
  return s;
}

}  // namespace hetccl
