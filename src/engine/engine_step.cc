#include "engine/engine_step.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "algo/tuned_plans.h"
#include "util/collective_setup.h"

namespace hetccl {

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
