// Communicator lifecycle: version, unique ids, init, split, shrink,
// finalize, destroy, abort, and the queries on a communicator.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "api/api_call.h"
#include "bootstrap/bootstrap_settings.h"
#include "bootstrap/protocol.h"
#include "bootstrap/root.h"
#include "bootstrap/unique_id.h"
#include "core/comm_registry.h"
#include "core/group.h"
#include "runtime/gpu_device.h"
#include "util/log.h"

using hetccl::apiCall;
using hetccl::CommConfig;
using hetccl::CommRegistry;
using hetccl::Communicator;
using hetccl::fail;
using hetccl::Group;

namespace {

// Registers a new communicator and starts its init: deferred to
// ncclGroupEnd inside a group, in the background when nonblocking, else
// right here. A failed blocking init leaves no communicator behind.
ncclResult_t startInit(ncclComm_t* out, std::shared_ptr<Communicator> comm,
                       const ncclUniqueId& id) {
  ncclComm* handle = CommRegistry::instance().add(comm);
  *out = handle;
  if (Group::current().active()) {
    Group::current().addInit(comm, id);
    return ncclSuccess;
  }
  if (!comm->config().blocking) {
    comm->initializeInBackground(id);
    return ncclInProgress;
  }
  try {
    comm->initialize(id);
  } catch (...) {
    CommRegistry::instance().remove(handle);
    *out = nullptr;
    throw;
  }
  return ncclSuccess;
}

// Before anything is allocated: a communicator's memory grows with nranks.
void checkRankCount(const char* name, int nranks) {
  HETCCL_CHECK_ARG(nranks >= 1, "%s must be at least 1, not %d", name, nranks);
  HETCCL_CHECK_ARG(nranks <= hetccl::kMaxRanks,
                   "%s %d is more than the maximum of %d ranks in a "
                   "communicator",
                   name, nranks, hetccl::kMaxRanks);
}

// A root that is there answers a cancel at once.
constexpr double kCancelRootSeconds = 1.0;

void checkRankArgs(ncclComm_t* comm, int nranks, int rank) {
  HETCCL_CHECK_ARG(comm != nullptr, "comm (the output pointer) is NULL");
  checkRankCount("nranks", nranks);
  HETCCL_CHECK_ARG(rank >= 0 && rank < nranks,
                   "rank %d is out of range [0, %d)", rank, nranks);
}

}  // namespace

HETCCL_API(ncclResult_t, ncclGetVersion, int* version) {
  HETCCL_RETURN_TO_NCCL(GetVersion, version);
  return apiCall(__func__, [&] {
    HETCCL_CHECK_ARG(version != nullptr, "version is NULL");
    *version = NCCL_VERSION_CODE;
    return ncclSuccess;
  });
}

HETCCL_API(ncclResult_t, ncclGetUniqueId, ncclUniqueId* uniqueId) {
  HETCCL_RETURN_TO_NCCL(GetUniqueId, uniqueId);
  return apiCall(__func__, [&] {
    HETCCL_CHECK_ARG(uniqueId != nullptr, "uniqueId is NULL");
    *uniqueId = hetccl::createUniqueId();
    return ncclSuccess;
  });
}

HETCCL_API(ncclResult_t, ncclCommInitRankConfig, ncclComm_t* comm, int nranks,
           ncclUniqueId commId, int rank, ncclConfig_t* config) {
  return apiCall(__func__, [&] {
    checkRankArgs(comm, nranks, rank);
    hetccl::decodeUniqueId(commId);  // a corrupted id fails here, at once
    auto created = std::make_shared<Communicator>(rank, nranks,
                                                  CommConfig::fromUser(config));
    return startInit(comm, std::move(created), commId);
  });
}

HETCCL_API(ncclResult_t, ncclCommInitRank, ncclComm_t* comm, int nranks,
           ncclUniqueId commId, int rank) {
  return ncclCommInitRankConfig(comm, nranks, commId, rank, nullptr);
}

// Several root ids spread the bootstrap load in NCCL; HetCCL's bootstrap
// serves a communicator from one root, so ranks join the first id and the
// first rank assigned to each other root tells that root it is not needed.
HETCCL_API(ncclResult_t, ncclCommInitRankScalable, ncclComm_t* newcomm,
           int nranks, int myrank, int nId, ncclUniqueId* commIds,
           ncclConfig_t* config) {
  return apiCall(__func__, [&] {
    checkRankArgs(newcomm, nranks, myrank);
    HETCCL_CHECK_ARG(commIds != nullptr, "commIds is NULL");
    HETCCL_CHECK_ARG(nId >= 1 && nId <= nranks,
                     "nId must be in [1, nranks=%d], not %d", nranks, nId);
    for (int i = 0; i < nId; ++i) hetccl::decodeUniqueId(commIds[i]);
    for (int i = 1; i < nId; ++i) {
      int firstRankOfRoot = (i * nranks + nId - 1) / nId;
      if (myrank == firstRankOfRoot) hetccl::cancelRoot(commIds[i]);
    }
    auto created = std::make_shared<Communicator>(myrank, nranks,
                                                  CommConfig::fromUser(config));
    return startInit(newcomm, std::move(created), commIds[0]);
  });
}

// One process drives `ndev` ranks: on GPUs, rank i on devlist[i] (or on
// device i without a list); without GPUs they are CPU ranks and the list
// only fixes how many.
HETCCL_API(ncclResult_t, ncclCommInitAll, ncclComm_t* comms, int ndev,
           const int* devlist) {
  return apiCall(__func__, [&] {
    HETCCL_CHECK_ARG(comms != nullptr, "comms is NULL");
    checkRankCount("ndev", ndev);
    if (devlist != nullptr) {
      std::vector<int> sorted(devlist, devlist + ndev);
      std::sort(sorted.begin(), sorted.end());
      auto twice = std::adjacent_find(sorted.begin(), sorted.end());
      HETCCL_CHECK_ARG(twice == sorted.end(),
                       "device %d appears twice in devlist", *twice);
    }
    const std::optional<hetccl::GpuDevice> gpu = hetccl::currentGpuDevice();
    auto deviceOf = [&](int r) { return devlist ? devlist[r] : r; };
    if (gpu) {
      const int count = hetccl::deviceCountOf(*gpu);
      for (int r = 0; r < ndev; ++r)
        HETCCL_CHECK_ARG(deviceOf(r) >= 0 && deviceOf(r) < count,
                         "rank %d would run on device %d, but this process "
                         "has devices 0..%d",
                         r, deviceOf(r), count - 1);
    }
    ncclUniqueId id = hetccl::createEphemeralUniqueId(
        hetccl::BootstrapSettings::fromEnvironment());
    std::vector<std::shared_ptr<Communicator>> created;
    std::vector<std::function<void()>> inits;
    for (int r = 0; r < ndev; ++r) {
      created.push_back(std::make_shared<Communicator>(r, ndev, CommConfig()));
      created.back()->bindToDevice(deviceOf(r));
      inits.push_back(
          [comm = created.back().get(), id] { comm->initialize(id); });
    }
    // The ranks wait for each other: if one cannot start, the others stop
    // at once, and so does the root that waits for them all.
    hetccl::runConcurrently(inits, [&](const hetccl::Error& why) {
      for (const auto& comm : created) comm->stopInit(why.what());
      hetccl::cancelRoot(id, kCancelRootSeconds);
    });
    for (int r = 0; r < ndev; ++r)
      comms[r] = CommRegistry::instance().add(created[r]);
    return ncclSuccess;
  });
}

HETCCL_API(ncclResult_t, ncclCommSplit, ncclComm_t comm, int color, int key,
           ncclComm_t* newcomm, ncclConfig_t* config) {
  return apiCall(__func__, [&] {
    auto parent = CommRegistry::instance().find(comm);
    // A rank's bad arguments are told to every rank in the split's
    // exchange, so that all of them fail at once and stay in step.
    std::string refusal;
    CommConfig childConfig = parent->config();
    try {
      HETCCL_CHECK_ARG(newcomm != nullptr, "newcomm is NULL");
      HETCCL_CHECK_ARG(
          color >= 0 || color == NCCL_SPLIT_NOCOLOR,
          "color must be non-negative or NCCL_SPLIT_NOCOLOR, not %d", color);
      if (config != nullptr) childConfig = CommConfig::fromUser(config);
    } catch (const hetccl::Error& e) {
      refusal = e.what();
    }
    std::unique_ptr<Communicator> child =
        parent->split(color, key, childConfig, refusal);
    *newcomm = nullptr;
    if (!child) return ncclSuccess;
    *newcomm = CommRegistry::instance().add(std::move(child));
    return childConfig.blocking ? ncclSuccess : ncclInProgress;
  });
}

HETCCL_API(ncclResult_t, ncclCommShrink, ncclComm_t comm, int* excludeRanksList,
           int excludeRanksCount, ncclComm_t* newcomm, ncclConfig_t* config,
           int shrinkFlags) {
  return apiCall(__func__, [&] {
    auto parent = CommRegistry::instance().find(comm);
    HETCCL_CHECK_ARG(newcomm != nullptr, "newcomm is NULL");
    HETCCL_CHECK_ARG(excludeRanksCount >= 0 && (excludeRanksCount == 0 ||
                                                excludeRanksList != nullptr),
                     "invalid exclude list (%d ranks)", excludeRanksCount);
    HETCCL_CHECK_ARG(
        shrinkFlags == NCCL_SHRINK_DEFAULT || shrinkFlags == NCCL_SHRINK_ABORT,
        "unknown shrink flags 0x%x", shrinkFlags);
    std::vector<int> excluded(excludeRanksList,
                              excludeRanksList + excludeRanksCount);
    for (int r : excluded)
      HETCCL_CHECK_ARG(r >= 0 && r < parent->nranks(),
                       "excluded rank %d is out of range [0, %d)", r,
                       parent->nranks());
    CommConfig childConfig =
        config != nullptr ? CommConfig::fromUser(config) : parent->config();
    auto child =
        parent->shrink(excluded, childConfig, shrinkFlags == NCCL_SHRINK_ABORT);
    *newcomm = CommRegistry::instance().add(std::move(child));
    return childConfig.blocking ? ncclSuccess : ncclInProgress;
  });
}

HETCCL_API(ncclResult_t, ncclCommFinalize, ncclComm_t comm) {
  return apiCall(__func__, [&] {
    CommRegistry::instance().find(comm)->finalize();
    return ncclSuccess;
  });
}

// Destroy waits for the communicator's queued work, like NCCL, unless that
// work can no longer complete (the communicator failed): then it aborts it.
HETCCL_API(ncclResult_t, ncclCommDestroy, ncclComm_t comm) {
  return apiCall(__func__, [&] {
    auto owned = CommRegistry::instance().remove(comm);
    // A communicator still initialising has no work to wait for, and its
    // init may wait for peers until HETCCL_BOOTSTRAP_TIMEOUT: destroying
    // it stops the init, as an abort does.
    if (owned->state() == ncclInProgress) {
      LOG_INFO(hetccl::kLogInit,
               "rank %d: destroyed while still initialising; init stopped",
               owned->rank());
      owned->abort();
      return ncclSuccess;
    }
    try {
      owned->finalize();
    } catch (const hetccl::Error& e) {
      LOG_INFO(hetccl::kLogInit,
               "rank %d: destroying a failed communicator: %s", owned->rank(),
               e.what());
      owned->abort();
    }
    return ncclSuccess;
  });
}

HETCCL_API(ncclResult_t, ncclCommAbort, ncclComm_t comm) {
  return apiCall(__func__, [&] {
    CommRegistry::instance().remove(comm)->abort();
    return ncclSuccess;
  });
}

HETCCL_API(ncclResult_t, ncclCommRevoke, ncclComm_t comm, int revokeFlags) {
  return apiCall(__func__, [&] {
    auto target = CommRegistry::instance().find(comm);
    HETCCL_CHECK_ARG(revokeFlags == NCCL_REVOKE_DEFAULT,
                     "revokeFlags must be NCCL_REVOKE_DEFAULT, not %d",
                     revokeFlags);
    target->revoke();
    return ncclSuccess;
  });
}

HETCCL_API(const char*, ncclGetErrorString, ncclResult_t result) {
  HETCCL_RETURN_TO_NCCL(GetErrorString, result);
  switch (result) {
    case ncclSuccess:
      return "no error";
    case ncclUnhandledCudaError:
      return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError:
      return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError:
      return "internal error - please report this issue to the HetCCL "
             "developers";
    case ncclInvalidArgument:
      return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage:
      return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError:
      return "remote process exited or there was a network error";
    case ncclInProgress:
      return "NCCL operation in progress";
    default:
      return "unknown result code";
  }
}

HETCCL_API(const char*, ncclGetLastError, ncclComm_t comm) {
  const char* text = hetccl::lastError();
  if (text[0] != '\0' || comm == nullptr) return text;
  // Nothing failed on this thread: report the communicator's own error.
  thread_local std::string commError;
  try {
    commError = CommRegistry::instance().find(comm)->stateMessage();
  } catch (const hetccl::Error&) {
    commError.clear();
  }
  return commError.c_str();
}

HETCCL_API(ncclResult_t, ncclCommGetAsyncError, ncclComm_t comm,
           ncclResult_t* asyncError) {
  HETCCL_RETURN_TO_NCCL(CommGetAsyncError, comm, asyncError);
  return apiCall(__func__, [&] {
    auto target = CommRegistry::instance().find(comm);
    HETCCL_CHECK_ARG(asyncError != nullptr, "asyncError is NULL");
    *asyncError = target->asyncError();
    return ncclSuccess;
  });
}

HETCCL_API(ncclResult_t, ncclCommCount, const ncclComm_t comm, int* count) {
  return apiCall(__func__, [&] {
    auto target = CommRegistry::instance().find(comm);
    HETCCL_CHECK_ARG(count != nullptr, "count is NULL");
    *count = target->nranks();
    return ncclSuccess;
  });
}

HETCCL_API(ncclResult_t, ncclCommUserRank, const ncclComm_t comm, int* rank) {
  return apiCall(__func__, [&] {
    auto target = CommRegistry::instance().find(comm);
    HETCCL_CHECK_ARG(rank != nullptr, "rank is NULL");
    *rank = target->rank();
    return ncclSuccess;
  });
}

HETCCL_API(ncclResult_t, ncclCommCuDevice, const ncclComm_t comm, int* device) {
  return apiCall(__func__, [&] {
    auto target = CommRegistry::instance().find(comm);
    HETCCL_CHECK_ARG(device != nullptr, "device is NULL");
    if (!target->gpu())
      fail(ncclInvalidUsage, "rank %d is a CPU rank: it has no GPU",
           target->rank());
    *device = target->gpu()->ordinal;
    return ncclSuccess;
  });
}
