// The parameters that shape one communicator, read from the environment
// once when it is created (a bad value fails that init) and passed down:
// each component reads its own slice with its fromEnvironment(), and each
// layer below gets only the slices it uses.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "algo/plan_settings.h"
#include "bootstrap/bootstrap_settings.h"
#include "domain/domain_backend.h"
#include "engine/gpu/gpu_engine_settings.h"
#include "transport/transport_settings.h"
#include "util/params.h"
#include "util/settings_agreement.h"

namespace hetccl {

// The core's own parameters (core_params.def).
#define HETCCL_PARAMS_FILE "core/core_params.def"
#define HETCCL_PARAMS_LIST coreParams
#include "util/declare_params.inc"

struct Settings {
  // Each component's slice, read by its own fromEnvironment().
  BootstrapSettings bootstrap;
  TransportSettings transports;  // HETCCL_TRANSPORT and each transport's
  BackendSettings backends;      // each domain back-end's
  PlanSettings plans;
  GpuEngineSettings gpuEngine;
  // The core's own.
  double timeoutSeconds;                 // HETCCL_TIMEOUT; 0: forever
  std::optional<std::string> hostId;     // HETCCL_HOSTID
  std::string domains;                   // HETCCL_DOMAINS; empty: by runtime
  bool checkCalls;                       // HETCCL_CHECK_CALLS
  std::optional<std::string> statusDir;  // HETCCL_STATUS_DIR
  // Every parameter that must be the same on every rank (ParamScope::Same),
  // in the order of allParams(): init compares them
  // (util/settings_agreement.h).
  std::vector<SettingValue> mustAgree;

  // Throws an Error (ncclInvalidArgument) for the first bad value.
  static Settings fromEnvironment();
};

}  // namespace hetccl
