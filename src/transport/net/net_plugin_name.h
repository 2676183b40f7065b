// Which files the net transport tries for the plugin HETCCL_NET_PLUGIN (or
// NCCL_NET_PLUGIN) names, in the order NCCL tries them, so that the value a
// cluster sets for NCCL or RCCL picks the same plugin here.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace hetccl {

// Unset: libnccl-net.so. A value with a '/': that path alone. Else
// libnccl-net-NAME.so, then NAME as it is (a library name the loader
// finds). Names without a '/' are looked up by dlopen's search (its
// LD_LIBRARY_PATH, the cache).
std::vector<std::string> netPluginCandidates(
    const std::optional<std::string>& value);

}  // namespace hetccl
