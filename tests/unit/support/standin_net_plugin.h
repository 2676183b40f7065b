// The net module and the stand-in NCCL net plugin this build made
// (tests/net_plugin), for unit tests: they link HetCCL's internal archive,
// so the module is not "beside the library" for them.
#pragma once

#include <string>

#include "transport/net/net_library.h"

namespace hetccl {

// libhetccl-net.so of this build.
std::string builtNetModule();
// The stand-in plugin exporting every ABI version (`version` 0), or only
// version `version` (8 .. 12).
std::string standInNetPlugin(int version = 0);
// The built module with `plugin` loaded, kept until the process exits as
// the transport keeps its own (a plugin is never unloaded: net_library.h).
const NetLibrary& loadedNetLibrary(const std::string& plugin);
// Points HETCCL_NET_MODULE and HETCCL_NET_PLUGIN at the built module and
// the stand-in (unless the environment names others), for the process's
// netLibrary().
void useStandInNetPlugin();

}  // namespace hetccl
