#include "engine/gpu/staged_launch_script.h"

#include <sched.h>

#include <algorithm>

#include "runtime/device/device_module.h"

namespace hetccl {

void StagedLaunchScript::add(const StagingRing& ring,
                             const StagingProxy::Job& job) {
  const bool known =
      std::any_of(rings_.begin(), rings_.end(),
                  [&](const RingState& state) { return state.ring == &ring; });
  if (!known) rings_.push_back({&ring, 0});
  jobs_.push_back(job);
}

void StagedLaunchScript::releaseRings() const {
  for (const RingState& state : rings_)
    state.ring->raiseProxyCounter(HETCCL_DEVICE_WAIT_RELEASED);
}

void StagedLaunchScript::start(void* argument) {
  auto& script = *static_cast<StagedLaunchScript*>(argument);
  // The enqueuing thread seals the script microseconds after it added
  // this host function, failing or not.
  while (!script.sealed_.load(std::memory_order_acquire)) sched_yield();
  if (script.abort_->raised()) return script.releaseRings();
  for (RingState& state : script.rings_) {
    // Idle: both counters hold the number of pieces of earlier launches.
    state.keptCounters = *state.ring->proxyCounter();
    state.ring->setCounters(0);
  }
  script.proxy_.postFirst(script.jobs_);
  // A failure raises the signal before it releases the rings: if it came
  // while the counters were being set, release them again.
  if (script.abort_->raised()) script.releaseRings();
}

void StagedLaunchScript::end(void* argument) {
  auto& script = *static_cast<StagedLaunchScript*>(argument);
  if (script.abort_->raised()) {
    script.releaseRings();
  } else {
    for (const RingState& state : script.rings_)
      state.ring->setCounters(state.keptCounters);
  }
  __atomic_add_fetch(&script.ends_, 1, __ATOMIC_ACQ_REL);
}

}  // namespace hetccl
