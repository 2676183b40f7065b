// The transport layer's settings, read when a communicator is created:
// which transport links the ranks of different domains (HETCCL_TRANSPORT,
// transport_params.def) and each registered transport's own slice, which
// its connect() takes from TransportSetup.
#pragma once

#include <string>

#include "transport/net/net_settings.h"
#include "transport/shm/shm_link_settings.h"
#include "transport/tcp/tcp_settings.h"
#include "transport/ucx/ucx_settings.h"
#include "util/params.h"

namespace hetccl {

#define HETCCL_PARAMS_FILE "transport/transport_params.def"
#define HETCCL_PARAMS_LIST transportParams
#include "util/declare_params.inc"

struct TransportSettings {
  std::string selection;  // HETCCL_TRANSPORT; empty: auto
  ShmLinkSettings shm;
  TcpSettings tcp;
  UcxSettings ucx;
  NetSettings net;

  // Throws ncclInvalidArgument for the first bad value, a transport this
  // build does not have included (TransportSelection::parse).
  static TransportSettings fromEnvironment();
};

}  // namespace hetccl
