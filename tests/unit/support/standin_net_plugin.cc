#include "support/standin_net_plugin.h"

#include <cstdlib>
#include <mutex>
#include <vector>

namespace hetccl {

std::string builtNetModule() { return HETCCL_NET_MODULE_PATH; }

std::string standInNetPlugin(int version) {
  return std::string(HETCCL_STANDIN_NET_DIR) + "/libnccl-net-hetccl-test" +
         (version == 0 ? "" : "-v" + std::to_string(version)) + ".so";
}

const NetLibrary& loadedNetLibrary(const std::string& plugin) {
  // Never destroyed: the libraries stay reachable, as netLibrary()'s does.
  static auto* kept = new std::vector<const NetLibrary*>;
  static std::mutex mutex;
  const NetLibrary* library = NetLibrary::load(builtNetModule(), plugin);
  std::lock_guard<std::mutex> lock(mutex);
  kept->push_back(library);
  return *library;
}

void useStandInNetPlugin() {
  setenv("HETCCL_NET_MODULE", builtNetModule().c_str(), /*overwrite=*/0);
  setenv("HETCCL_NET_PLUGIN", standInNetPlugin().c_str(), /*overwrite=*/0);
}

}  // namespace hetccl
