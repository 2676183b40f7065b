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

namespace {

// What one rank timed, as oob gathers it: its hop, and its domain's
// library (alphaUs < 0: none).
struct RankTimings {
  double hopUs = 0;
  double alphaUs = -1;
  double busGbps = 0;
};

// Each domain's library as its slowest rank timed it (none: not timed).
std::vector<std::optional<LibraryCost>> slowestLibraries(
    const std::vector<RankTimings>& all, const DomainMap& domains) {
  std::vector<std::optional<LibraryCost>> libraries(domains.count());
  for (int r = 0; r < static_cast<int>(all.size()); ++r) {
    if (all[r].alphaUs < 0) continue;
    std::optional<LibraryCost>& library = libraries[domains.domainOf(r)];
    if (!library) library = LibraryCost{all[r].alphaUs, all[r].busGbps};
    library->alphaUs = std::max(library->alphaUs, all[r].alphaUs);
    library->busGbps = std::min(library->busGbps, all[r].busGbps);
  }
  return libraries;
}

}  // namespace

void tuneToMeasuredStep(StepTimedEngine& engine, const PlanSettings& plans,
                        const DomainMap& domains, Oob& oob,
                        double timeoutSeconds) {
  constexpr int kRounds = 5;
  // A 4 MiB all-reduce takes milliseconds on small machines: fewer rounds.
  constexpr int kLibraryRounds = 3;
  std::optional<Error> failure;
  RankTimings mine;
  captureFailure(failure, [&] {
    if (const auto library = engine.timeDomainLibrary(kLibraryRounds))
      mine = {0, library->alphaUs, library->busGbps};
    mine.hopUs = engine.timeOneElementAllReduceUs(kRounds, timeoutSeconds);
  });
  agreeOnSuccess(oob, failure, "heterogeneous communicator",
                 "timing the engine's hop across domains at init");
  std::vector<RankTimings> all(oob.nranks());
  all[oob.rank()] = mine;
  oob.allGather(all.data(), sizeof(RankTimings));
  double slowestUs = 0;
  for (const RankTimings& timings : all)
    slowestUs = std::max(slowestUs, timings.hopUs);
  const PlanSettings timed =
      withTimedLibraries(plans, slowestLibraries(all, domains), oob.rank());
  engine.retune(retuneWithEngineStep(
      timed, fittedEngineStepUs(timed, slowestUs), slowestUs, oob.rank()));
}

}  // namespace hetccl
