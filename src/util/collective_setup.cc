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
  int32_t code;
  char host[64];
  char message[440];
};

Outcome outcomeOf(const std::optional<Error>& failure) {
  Outcome outcome;
  std::memset(&outcome, 0, sizeof(outcome));
  outcome.failed = failure ? 1 : 0;
  outcome.code = failure ? static_cast<int32_t>(failure->code()) : 0;
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
  // The first rank that failed on its own rather than because another
  // did (ncclRemoteError): its message says what actually went wrong.
  int culprit = -1;
  for (int r = 0; r < oob.nranks(); ++r) {
    if (!outcomes[r].failed) continue;
    if (culprit < 0) culprit = r;
    if (outcomes[r].code != ncclRemoteError) {
      culprit = r;
      break;
    }
  }
  if (culprit < 0) return;
  Outcome& peer = outcomes[culprit];
  peer.host[sizeof(peer.host) - 1] = '\0';
  peer.message[sizeof(peer.message) - 1] = '\0';
  fail(ncclRemoteError, "%s: rank %d (host %s) failed while %s: %s", what,
       culprit, peer.host, stage, peer.message);
}

}  // namespace hetccl
