// Which files the net transport tries for HETCCL_NET_PLUGIN's value: the
// order NCCL uses for NCCL_NET_PLUGIN.
#include "transport/net/net_plugin_name.h"

#include <gtest/gtest.h>

namespace hetccl {
namespace {

using Names = std::vector<std::string>;

TEST(NetPluginName, UnsetTakesTheDefaultPlugin) {
  EXPECT_EQ(netPluginCandidates(std::nullopt), Names{"libnccl-net.so"});
}

TEST(NetPluginName, ANameIsTheSuffixFirstThenTheNameItself) {
  EXPECT_EQ(netPluginCandidates("ofi"), (Names{"libnccl-net-ofi.so", "ofi"}));
  EXPECT_EQ(netPluginCandidates("libnccl-net-aws.so"),
            (Names{"libnccl-net-libnccl-net-aws.so.so", "libnccl-net-aws.so"}));
}

TEST(NetPluginName, APathIsTakenAsItIs) {
  EXPECT_EQ(netPluginCandidates("/opt/ofi/lib/libnccl-net.so"),
            Names{"/opt/ofi/lib/libnccl-net.so"});
  EXPECT_EQ(netPluginCandidates("./libnccl-net-x.so"),
            Names{"./libnccl-net-x.so"});
}

}  // namespace
}  // namespace hetccl
