#include "core/all_params.h"

#include "core/settings.h"
#include "domain/nccl/nccl_library.h"
#include "domain/rccl/rccl_library.h"
#include "runtime/runtime_params.h"

namespace hetccl {

const ParamList& allParams() {
  static const ParamList params = [] {
    ParamList all;
    // One line per component.
    for (const ParamList* component : {
             &utilParams(),
             &runtimeParams(),
             &transportParams(),
             &shmLinkParams(),
             &tcpParams(),
             &ucxParams(),
             &netParams(),
             &shmParams(),
             &ncclParams(),
             &rcclParams(),
             &bootstrapParams(),
             &planParams(),
             &gpuEngineParams(),
             &coreParams(),
         })
      all.insert(all.end(), component->begin(), component->end());
    return all;
  }();
  return params;
}

}  // namespace hetccl
