#include "engine/gpu/proxy/staging_streams.h"

#include <algorithm>
#include <stdexcept>

#include "util/log.h"

namespace hetccl {

StagingStreams::StagingStreams(const DeviceModule& module, void* engineStream,
                               size_t pairs)
    : module_(module),
      engine_(engineStream),
      enginePosition_(module),
      planStart_(module) {
  for (size_t i = 0; i < std::max<size_t>(pairs, 1); ++i) {
    up_.push_back(std::make_unique<Side>(module));
    down_.push_back(std::make_unique<Side>(module));
  }
}

void StagingStreams::synchronize() const {
  for (const auto* sides : {&up_, &down_})
    for (const auto& side : *sides)
      if (int code = module_.api().streamSynchronize(side->stream.handle()))
        LOG_WARN(kLogColl, "a GPU staging stream failed: %s",
                 module_.api().errorString(code));
}

void* StagingStreams::next(std::vector<std::unique_ptr<Side>>& sides,
                           size_t& turn) {
  void* stream = sides[turn]->stream.handle();
  turn = (turn + 1) % sides.size();
  return stream;
}

StagingStreams::Side& StagingStreams::sideOf(void* stream) {
  for (auto* sides : {&up_, &down_})
    for (auto& side : *sides)
      if (side->stream.handle() == stream) return *side;
  throw std::logic_error("not a staging stream");
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
  sideOf(side).followed = true;
}

void StagingStreams::beginLaunch() {
  for (auto* sides : {&up_, &down_})
    for (auto& side : *sides) side->followed = false;
  marksUsed_ = 0;
}

void StagingStreams::joinEngine() {
  for (auto* sides : {&up_, &down_})
    for (auto& side : *sides) {
      if (!side->followed) continue;
      side->end.record(side->stream.handle());
      module_.check(module_.api().streamWaitEvent(engine_, side->end.handle()),
                    "joining a staging stream back into the engine's");
      side->followed = false;
    }
}

bool StagingStreams::idle() const {
  for (const auto* sides : {&up_, &down_})
    for (const auto& side : *sides) {
      int idle = 0;
      if (module_.api().streamQuery(side->stream.handle(), &idle) == 0 && !idle)
        return false;
    }
  return true;
}

}  // namespace hetccl
