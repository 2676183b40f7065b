#include "op/waiting_call.h"

namespace hetccl {

const char* engineStageName(EngineStage stage) {
  switch (stage) {
    case EngineStage::kNone:
      return "";
    case EngineStage::kStreamNotThere:
      return "its stream has not reached the launch";
    case EngineStage::kDeviceToHost:
      return "device-to-host copy";
    case EngineStage::kNetwork:
      return "network";
    case EngineStage::kHostToDevice:
      return "host-to-device copy";
  }
  return "";
}

}  // namespace hetccl
