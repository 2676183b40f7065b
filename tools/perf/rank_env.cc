#include "perf/rank_env.h"

#include <cerrno>
#include <cstdlib>
#include <optional>

#include "perf/perf_error.h"

namespace hetccl {
namespace perf {
namespace {

struct LauncherVariables {
  const char* launcher;
  const char* rank;
  const char* size;
  const char* localRank;
};

// In order of precedence: torchrun's variables win when a launcher runs
// torchrun, and srun's come last because SLURM sets them in batch scripts
// too.
constexpr LauncherVariables kLaunchers[] = {
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK"},
    {"mpirun", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
     "OMPI_COMM_WORLD_LOCAL_RANK"},
    {"mpirun (PMI)", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"},
    {"srun", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
};

std::optional<int> envInteger(const char* name) {
  const char* text = std::getenv(name);
  if (!text || !*text) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || value < 0 || value > (1 << 30)) {
    perfFail("%s='%s' is not a non-negative integer", name, text);
  }
  return static_cast<int>(value);
}

bool envSet(const char* name) {
  const char* text = std::getenv(name);
  return text && *text;
}

void checkRankInRange(const RankSetup& setup, const char* rankName) {
  if (setup.nranks < 1 || setup.rank >= setup.nranks) {
    perfFail("%s=%d is not below the number of ranks %d", rankName, setup.rank,
             setup.nranks);
  }
}

RankSetup spawnedRankSetup() {
  RankSetup setup;
  setup.rank = *envInteger(kEnvRank);
  const std::optional<int> nranks = envInteger(kEnvNranks);
  if (!nranks) perfFail("%s is set but %s is not", kEnvRank, kEnvNranks);
  setup.nranks = *nranks;
  setup.localRank = envInteger(kEnvLocalRank).value_or(setup.rank);
  setup.launcher = "hetccl-perf -np";
  checkRankInRange(setup, kEnvRank);
  const char* hex = std::getenv(kEnvUniqueId);
  if (!hex || !uniqueIdFromHex(hex, &setup.id)) {
    perfFail("%s is missing or not %d hex digits", kEnvUniqueId,
             2 * NCCL_UNIQUE_ID_BYTES);
  }
  return setup;
}

// NVIDIA's NCCL and RCCL know only NCCL_COMM_ID.
void shareAddressWithNccl(const NcclApi& nccl) {
  if (nccl.hasHetcclExtensions() || envSet("NCCL_COMM_ID")) return;
  if (envSet("HETCCL_COMM_ID")) {
    setenv("NCCL_COMM_ID", std::getenv("HETCCL_COMM_ID"), 1);
  }
}

// Makes sure every rank will find the root: HETCCL_COMM_ID or NCCL_COMM_ID,
// or for torchrun one port above its own rendezvous.
void ensureRendezvousAddress(const RankSetup& setup) {
  if (envSet("HETCCL_COMM_ID") || envSet("NCCL_COMM_ID")) return;
  if (setup.launcher == "torchrun" && envSet("MASTER_ADDR") &&
      envSet("MASTER_PORT")) {
    const std::string host = std::getenv("MASTER_ADDR");
    const std::optional<int> port = envInteger("MASTER_PORT");
    if (*port + 1 > 65535)
      perfFail("MASTER_PORT=%d leaves no port above it", *port);
    // An IPv6 literal needs brackets to keep its colons apart from the port.
    const std::string address =
        (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
        std::to_string(*port + 1);
    setenv("HETCCL_COMM_ID", address.c_str(), 1);
    return;
  }
  perfFail(
      "started by %s with %d ranks, but the ranks have no rendezvous "
      "address: set HETCCL_COMM_ID=host:port (the host of rank 0 and a "
      "free port) in every rank's environment, or start local ranks "
      "with hetccl-perf -np N",
      setup.launcher.c_str(), setup.nranks);
}

}  // namespace

bool isSpawnedRank() { return envSet(kEnvRank); }

RankSetup discoverRank(const NcclApi& nccl) {
  if (isSpawnedRank()) return spawnedRankSetup();
  RankSetup setup;
  setup.launcher = "none (a single rank)";
  for (const LauncherVariables& vars : kLaunchers) {
    const std::optional<int> rank = envInteger(vars.rank);
    const std::optional<int> size = envInteger(vars.size);
    if (!rank || !size) continue;
    setup.rank = *rank;
    setup.nranks = *size;
    setup.localRank = envInteger(vars.localRank).value_or(0);
    setup.launcher = vars.launcher;
    checkRankInRange(setup, vars.rank);
    break;
  }
  if (setup.nranks > 1) {
    ensureRendezvousAddress(setup);
    shareAddressWithNccl(nccl);
  }
  nccl.check(nccl.getUniqueId(&setup.id), "ncclGetUniqueId", nullptr);
  return setup;
}

std::string uniqueIdToHex(const ncclUniqueId& id) {
  static const char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * NCCL_UNIQUE_ID_BYTES);
  for (char c : id.internal) {
    const unsigned byte = static_cast<unsigned char>(c);
    hex += kDigits[byte >> 4];
    hex += kDigits[byte & 15];
  }
  return hex;
}

bool uniqueIdFromHex(const std::string& hex, ncclUniqueId* id) {
  if (hex.size() != 2 * NCCL_UNIQUE_ID_BYTES) return false;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < NCCL_UNIQUE_ID_BYTES; ++i) {
    const int high = nibble(hex[2 * i]);
    const int low = nibble(hex[2 * i + 1]);
    if (high < 0 || low < 0) return false;
    id->internal[i] = static_cast<char>(high << 4 | low);
  }
  return true;
}

}  // namespace perf
}  // namespace hetccl
