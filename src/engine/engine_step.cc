#include "engine/engine_step.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <vector>

#include "algo/tuned_plans.h"
#include "util/collective_setup.h"

namespace hetccl {

Op oneElementAllReduce(void* buffer) {
  Op allReduce;
  allReduce.kind = OpKind::AllReduce;
  allReduce.dtype = ncclFloat32;
  allReduce.count = 1;
  allReduce.sendbuff = allReduce.recvbuff = buffer;
  return allReduce;
}

double fastestRunUs(int rounds, const std::function<void()>& run) {
  double fastestUs = 1e30;
  for (int i = 0; i < rounds; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run();
    fastestUs =
        std::min(fastestUs, std::chrono::duration<double, std::micro>(
                                std::chrono::steady_clock::now() - start)
                                .count());
  }
  return fastestUs;
}

bool timesItsStep(const PlanSettings& plans) {
  return plans.measuredInputs && plans.tuning &&
         plans.tuning->oneShotMax(OpKind::AllReduce) >= sizeof(float);
}

void tuneToMeasuredStep(StepTimedEngine& engine, const PlanSettings& plans,
                        Oob& oob, double timeoutSeconds) {
  constexpr int kRounds = 5;
  std::optional<Error> failure;
  double us = 0;
  captureFailure(failure, [&] {
    us = engine.timeOneElementAllReduceUs(kRounds, timeoutSeconds);
  });
  agreeOnSuccess(oob, failure, "heterogeneous communicator",
                 "timing the engine's hop across domains at init");
  std::vector<double> all(oob.nranks(), 0);
  all[oob.rank()] = us;
  oob.allGather(all.data(), sizeof(double));
  const double slowestUs = *std::max_element(all.begin(), all.end());
  engine.retune(retuneWithEngineStep(
      plans, fittedEngineStepUs(plans, slowestUs), slowestUs, oob.rank()));
}

}  // namespace hetccl
