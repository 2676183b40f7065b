#include "util/collective_setup.h"

#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace hetccl {
namespace {

// What each rank says about its step: fixed size, every string ended.
struct Outcome {
  uint32_t failed;
  char host[64];
  char message[188];
};

Outcome outcomeOf(const std::optional<Error>& failure) {
  Outcome outcome;
  std::memset(&outcome, 0, sizeof(outcome));
  outcome.failed = failure ? 1 : 0;
  gethostname(outcome.host, sizeof(outcome.host) - 1);
  if (failure)
    std::strncpy(outcome.message, failure->what(), sizeof(outcome.message) - 1);
  return outcome;
}

}  // namespace

void agreeOnSuccess(Oob& oob, const std::optional<Error>& failure,
                    const char* what, const char* stage) {
  std::vector<Outcome> outcomes(oob.nranks());
  outcomes[oob.rank()] = outcomeOf(failure);
  oob.allGather(outcomes.data(), sizeof(Outcome));
  if (failure) throw *failure;
  for (int r = 0; r < oob.nranks(); ++r) {
    Outcome& peer = outcomes[r];
    if (!peer.failed) continue;
    peer.host[sizeof(peer.host) - 1] = '\0';
    peer.message[sizeof(peer.message) - 1] = '\0';
    fail(ncclRemoteError, "%s: rank %d (host %s) failed while %s: %s", what, r,
         peer.host, stage, peer.message);
  }
}

}  // namespace hetccl
