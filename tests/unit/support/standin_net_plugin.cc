#include "support/standin_net_plugin.h"

#include <cstdlib>

namespace hetccl {

std::string builtNetModule() { return HETCCL_NET_MODULE_PATH; }

std::string standInNetPlugin(int version) {
  return std::string(HETCCL_STANDIN_NET_DIR) + "/libnccl-net-hetccl-test" +
         (version == 0 ? "" : "-v" + std::to_string(version)) + ".so";
}

void useStandInNetPlugin() {
  setenv("HETCCL_NET_MODULE", builtNetModule().c_str(), /*overwrite=*/0);
  setenv("HETCCL_NET_PLUGIN", standInNetPlugin().c_str(), /*overwrite=*/0);
}

}  // namespace hetccl
