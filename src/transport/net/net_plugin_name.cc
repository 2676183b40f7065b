#include "transport/net/net_plugin_name.h"

namespace hetccl {

std::vector<std::string> netPluginCandidates(
    const std::optional<std::string>& value) {
  if (!value) return {"libnccl-net.so"};
  if (value->find('/') != std::string::npos) return {*value};
  return {"libnccl-net-" + *value + ".so", *value};
}

}  // namespace hetccl
