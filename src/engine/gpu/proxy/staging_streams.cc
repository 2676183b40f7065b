#include "engine/gpu/proxy/staging_streams.h"

#include <tuple>

#include "util/log.h"

namespace hetccl {

StagingStreams::StagingStreams(const DeviceModule& module, void* engineStream)
    : module_(module),
      engine_(engineStream),
      up_(module),
      down_(module),
      enginePosition_(module),
      planStart_(module),
      upPosition_(module),
      downPosition_(module) {}

void StagingStreams::synchronize() const {
  for (void* stream : {up(), down()})
    if (int code = module_.api().streamSynchronize(stream))
      LOG_WARN(kLogColl, "a GPU staging stream failed: %s",
               module_.api().errorString(code));
}

void StagingStreams::followEngine(void* side) {
  enginePosition_.record(engine_);
  follow(side, enginePosition_);
}

size_t StagingStreams::markEngine() {
  if (marksUsed_ == marks_.size())
    marks_.push_back(std::make_unique<DeviceEvent>(module_));
  marks_[marksUsed_]->record(engine_);
  return marksUsed_++;
}

void StagingStreams::followMark(void* side, size_t mark) {
  follow(side, *marks_.at(mark));
}

void StagingStreams::markPlanStart() { planStart_.record(engine_); }

void StagingStreams::followPlanStart(void* side) { follow(side, planStart_); }

void StagingStreams::follow(void* side, const DeviceEvent& position) {
  module_.check(module_.api().streamWaitEvent(side, position.handle()),
                "ordering staging copies after the engine's stream");
  (side == up() ? upFollowed_ : downFollowed_) = true;
}

void StagingStreams::joinEngine() {
  for (auto [side, followed, position] :
       {std::tuple{up(), &upFollowed_, &upPosition_},
        std::tuple{down(), &downFollowed_, &downPosition_}}) {
    if (!*followed) continue;
    position->record(side);
    module_.check(module_.api().streamWaitEvent(engine_, position->handle()),
                  "joining a staging stream back into the engine's");
    *followed = false;
  }
}

bool StagingStreams::idle() const {
  for (void* stream : {up(), down()}) {
    int idle = 0;
    if (module_.api().streamQuery(stream, &idle) == 0 && !idle) return false;
  }
  return true;
}

}  // namespace hetccl
