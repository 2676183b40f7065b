// Collective set-up steps that may fail on some ranks only. A failed rank
// must still join the next exchange, or the others would wait for it
// forever: failures are captured, every rank says whether it failed, and
// only then is anything thrown.
#pragma once

#include <exception>
#include <optional>

#include "util/error.h"
#include "util/oob.h"

namespace hetccl {

// Runs `step` unless an earlier step failed, keeping its failure.
template <typename Step>
void captureFailure(std::optional<Error>& failure, Step step) {
  if (failure) return;
  try {
    step();
  } catch (const Error& e) {
    failure = e;
  } catch (const std::exception& e) {
    failure = Error(ncclSystemError, e.what());
  }
}

// All-gathers whether each rank failed, and how; throws this rank's
// failure, else ncclRemoteError naming the first rank that failed on its
// own (not with ncclRemoteError, because yet another one did), its host,
// what it was doing (`stage`) and its message (so that every rank says
// why, not only the one that hit the problem).
void agreeOnSuccess(Oob& oob, const std::optional<Error>& failure,
                    const char* what, const char* stage);

}  // namespace hetccl
